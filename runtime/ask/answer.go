package ask

import (
	"encoding/json"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
)

// The harness's side: a harness that runs calls itself (a provider's loop,
// a framework's runner) reads a call's input requests with Form, Sampling
// and the method, asks whoever answers them, and sends the call again with
// the answers these functions write (runtime.ToolCall.Answers, or package
// answercall's loop). MCP's doors do the same over the wire.

// FormRequest is an elicitation request as a harness shows it: the
// question, and the schema of the form to fill (MCP's restricted schema).
type FormRequest struct {
	Message string
	Schema  json.RawMessage
}

// Form reads r as a form to fill; ok is false for another kind of request.
func (r Request) Form() (f FormRequest, ok bool) {
	var p struct {
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if r.Method != MethodElicit || jsonv2.Unmarshal(r.Params, &p) != nil {
		return FormRequest{}, false
	}
	return FormRequest{Message: p.Message, Schema: p.RequestedSchema}, true
}

// SamplingRequest is a sampling request as a harness reads it: the messages
// to complete and the most tokens the completion may have.
type SamplingRequest struct {
	Messages  []Message
	MaxTokens int
}

// Sampling reads r as a completion to make; ok is false for another kind
// of request.
func (r Request) Sampling() (s SamplingRequest, ok bool) {
	var p struct {
		Messages []struct {
			Role    string `json:"role"`
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
		MaxTokens int `json:"maxTokens"`
	}
	if r.Method != MethodSample || jsonv2.Unmarshal(r.Params, &p) != nil {
		return SamplingRequest{}, false
	}
	s.MaxTokens = p.MaxTokens
	for _, m := range p.Messages {
		s.Messages = append(s.Messages, Message{Role: m.Role, Text: m.Content.Text})
	}
	return s, true
}

// AcceptForm is the answer of a person who filled a form with content: the
// form's Go value, or its members as a map. The handler's ask checks it
// against the form, as it checks any client's answer.
func AcceptForm(content any) (json.RawMessage, error) {
	b, err := json.Marshal(struct {
		Action  string `json:"action"`
		Content any    `json:"content"`
	}{"accept", content})
	if err != nil {
		return nil, fmt.Errorf("ask: the form's content does not encode: %w", err)
	}
	return b, nil
}

// DeclineForm is the answer of a person who would not fill the form: the
// handler's Elicit returns ErrDeclined.
func DeclineForm() json.RawMessage { return json.RawMessage(`{"action":"decline"}`) }

// AnswerSampling is the answer to a sampling request: the completion c.
func AnswerSampling(c Completion) json.RawMessage {
	b, _ := json.Marshal(struct {
		Role    string `json:"role"`
		Content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Model      string `json:"model,omitempty"`
		StopReason string `json:"stopReason,omitempty"`
	}{Role: "assistant", Content: struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", c.Text}, Model: c.Model, StopReason: c.StopReason})
	return b
}

// AnswerRoots is the answer to a roots request: roots, file:// URIs.
func AnswerRoots(roots []Root) json.RawMessage {
	type root struct {
		URI  string `json:"uri"`
		Name string `json:"name,omitempty"`
	}
	out := struct {
		Roots []root `json:"roots"`
	}{Roots: []root{}}
	for _, r := range roots {
		out.Roots = append(out.Roots, root{r.URI, r.Name})
	}
	b, _ := json.Marshal(out)
	return b
}
