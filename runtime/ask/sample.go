package ask

import (
	"context"
	"encoding/json"

	jsonv2 "github.com/go-json-experiment/json"
)

// Message is one message of a sampling request: its role ("user" or
// "assistant") and its text.
type Message struct {
	Role string
	Text string
}

// Completion is the client's model's answer to Sample.
type Completion struct {
	Text       string
	Model      string
	StopReason string
}

// Sample asks the client's model to complete messages, at most maxTokens
// long, under key. Before the answer came it returns ErrAsked; an answer
// that is no text completion is asked for again.
func Sample(ctx context.Context, key string, messages []Message, maxTokens int) (Completion, error) {
	req := func() Request {
		type content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		type message struct {
			Role    string  `json:"role"`
			Content content `json:"content"`
		}
		p := struct {
			Messages  []message `json:"messages"`
			MaxTokens int       `json:"maxTokens"`
		}{MaxTokens: maxTokens}
		for _, m := range messages {
			p.Messages = append(p.Messages, message{m.Role, content{"text", m.Text}})
		}
		b, _ := json.Marshal(p)
		return Request{Method: MethodSample, Params: b}
	}
	raw, err := answer(ctx, key, Sampling, req)
	if err != nil {
		return Completion{}, err
	}
	var res struct {
		Role    string `json:"role"`
		Content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Model      string `json:"model"`
		StopReason string `json:"stopReason"`
	}
	if jsonv2.Unmarshal(raw, &res) != nil || res.Role != "assistant" || res.Content.Type != "text" {
		return Completion{}, again(ctx, key, req())
	}
	return Completion{Text: res.Content.Text, Model: res.Model, StopReason: res.StopReason}, nil
}
