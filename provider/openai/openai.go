// Package openai speaks OpenAI's tool format for a keel tool set: tool
// definitions for Chat Completions and for the Responses API, with an
// optional strict mode; tool calls in (arguments arrive as a JSON string);
// results out. It imports no OpenAI SDK: it writes and reads their JSON.
package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/schemajson"
	"github.com/keelgen/keel/runtime"
)

// Options configure an Adapter.
type Options struct {
	// Strict offers every tool whose schema strict mode can express with
	// "strict": true, in the form strict mode requires. Others stay
	// non-strict; StrictProblems (and keelgen) say why.
	Strict bool
}

// Adapter converts between a keel tool set and OpenAI's wire format.
type Adapter struct {
	tools  []tool
	byName map[string]*tool
}

type tool struct {
	model  runtime.ModelTool
	params json.RawMessage // what the model is shown
	strict bool
	// optional records, per object path, the members that strict mode
	// made required-but-nullable, so a null the model sends for them is
	// read as "absent" again.
	optional map[string]map[string]bool
}

// New prepares the definitions of tools (runtime.ModelTools from generated
// code) once.
func New(tools []runtime.ModelTool, opts Options) *Adapter {
	a := &Adapter{byName: map[string]*tool{}}
	for _, m := range tools {
		t := tool{model: m, params: m.Parameters}
		if opts.Strict {
			if s, optional, problems := StrictSchema(m.Parameters); len(problems) == 0 {
				t.params, t.strict, t.optional = s, true, optional
			}
		}
		a.tools = append(a.tools, t)
	}
	for i := range a.tools {
		a.byName[a.tools[i].model.Name] = &a.tools[i]
	}
	return a
}

// FunctionDefinition is the function object of a Chat Completions tool.
type FunctionDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// ChatTool is one entry of a Chat Completions request's "tools".
type ChatTool struct {
	Type     string             `json:"type"` // "function"
	Function FunctionDefinition `json:"function"`
}

// ResponsesTool is one entry of a Responses API request's "tools" (flat).
type ResponsesTool struct {
	Type        string          `json:"type"` // "function"
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// ChatTools returns the Chat Completions tool definitions.
func (a *Adapter) ChatTools() []ChatTool {
	out := make([]ChatTool, 0, len(a.tools))
	for _, t := range a.tools {
		out = append(out, ChatTool{Type: "function", Function: FunctionDefinition{
			Name: t.model.Name, Description: t.model.Description, Parameters: t.params, Strict: t.strict}})
	}
	return out
}

// ResponsesTools returns the Responses API tool definitions.
func (a *Adapter) ResponsesTools() []ResponsesTool {
	out := make([]ResponsesTool, 0, len(a.tools))
	for _, t := range a.tools {
		out = append(out, ResponsesTool{Type: "function", Name: t.model.Name, Description: t.model.Description, Parameters: t.params, Strict: t.strict})
	}
	return out
}

// ChatToolCall is a tool call in a Chat Completions assistant message.
type ChatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"` // JSON, as a string
	} `json:"function"`
}

// FunctionCall is a Responses API output item of type "function_call".
type FunctionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolCall turns a call's id, name and arguments string, as either API
// sends them, into a keel ToolCall. Nothing is checked here: the executor
// does that. For a strict tool, a null the model sent for a member that was
// optional before strict mode made it required is removed again.
func (a *Adapter) ToolCall(id, name, arguments string) runtime.ToolCall {
	args := json.RawMessage(arguments)
	if t := a.byName[name]; t != nil && t.strict {
		args = dropNulls(args, t.optional)
	}
	return runtime.ToolCall{ID: id, Name: name, Arguments: args}
}

// FromChatToolCall converts a Chat Completions tool call.
func (a *Adapter) FromChatToolCall(c ChatToolCall) runtime.ToolCall {
	return a.ToolCall(c.ID, c.Function.Name, c.Function.Arguments)
}

// FromFunctionCall converts a Responses API function_call item.
func (a *Adapter) FromFunctionCall(c FunctionCall) runtime.ToolCall {
	return a.ToolCall(c.CallID, c.Name, c.Arguments)
}

// ChatToolMessage is the Chat Completions message that answers a call.
type ChatToolMessage struct {
	Role       string `json:"role"` // "tool"
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
}

// ChatResult answers a call in Chat Completions: the result JSON, with its
// code when it failed.
func ChatResult(r runtime.ToolResult) ChatToolMessage {
	return ChatToolMessage{Role: "tool", ToolCallID: r.CallID, Content: schemajson.ResultContent(r)}
}

// FunctionCallOutput answers a call in the Responses API.
type FunctionCallOutput struct {
	Type   string `json:"type"` // "function_call_output"
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// ResponsesResult answers a call in the Responses API.
func ResponsesResult(r runtime.ToolResult) FunctionCallOutput {
	return FunctionCallOutput{Type: "function_call_output", CallID: r.CallID, Output: schemajson.ResultContent(r)}
}

// refused are keywords strict mode does not accept.
var refused = []string{"minLength", "maxLength", "patternProperties", "propertyNames", "minProperties", "maxProperties",
	"unevaluatedProperties", "unevaluatedItems", "contains", "minContains", "maxContains", "uniqueItems",
	"allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "contentEncoding", "contentMediaType"}

// strictFormats are the string formats strict mode accepts.
var strictFormats = map[string]bool{"date-time": true, "time": true, "date": true, "duration": true, "email": true,
	"hostname": true, "ipv4": true, "ipv6": true, "uuid": true}

// StrictSchema rewrites schema into the form OpenAI's strict mode requires:
// every object closed, every property required, optional properties
// nullable. It returns the problems that make that impossible instead,
// with the path of each.
func StrictSchema(schema json.RawMessage) (out json.RawMessage, optional map[string]map[string]bool, problems []string) {
	doc, err := schemajson.Doc(schema)
	if err != nil {
		return nil, nil, []string{"the schema is not a JSON object"}
	}
	optional = map[string]map[string]bool{}
	problems = strictify(doc, "", optional)
	if len(problems) > 0 {
		return nil, nil, problems
	}
	out, err = schemajson.Marshal(doc)
	if err != nil {
		return nil, nil, []string{err.Error()}
	}
	return out, optional, nil
}

// StrictProblems says why a schema cannot be offered in strict mode; none
// when it can.
func StrictProblems(schema json.RawMessage) []string {
	_, _, problems := StrictSchema(schema)
	return problems
}

func strictify(s map[string]any, path string, optional map[string]map[string]bool) []string {
	var problems []string
	at := func(format string, args ...any) {
		where := path
		if where == "" {
			where = "the root"
		}
		problems = append(problems, fmt.Sprintf("%s: %s", where, fmt.Sprintf(format, args...)))
	}
	for _, kw := range refused {
		if _, ok := s[kw]; ok {
			at("keyword %q is not supported in strict mode", kw)
		}
	}
	if f, ok := s["format"].(string); ok && !strictFormats[f] {
		at("format %q is not supported in strict mode", f)
	}
	if _, ok := s["type"]; !ok && s["enum"] == nil && s["const"] == nil && s["anyOf"] == nil {
		at("a value of any type cannot be expressed in strict mode")
	}
	if props, ok := s["properties"].(map[string]any); ok || s["type"] == "object" {
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if ap {
				at("additionalProperties must be false in strict mode")
			}
		case nil:
			s["additionalProperties"] = false
		default:
			at("a map (additionalProperties with a schema) cannot be expressed in strict mode")
		}
		_, req := schemajson.Properties(s)
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		var required []any
		for _, name := range names {
			sub, _ := props[name].(map[string]any)
			if sub == nil {
				at("property %q has no schema", name)
				continue
			}
			problems = append(problems, strictify(sub, join(path, name), optional)...)
			if !req[name] {
				if optional[path] == nil {
					optional[path] = map[string]bool{}
				}
				optional[path][name] = true
				nullable(sub)
			}
			required = append(required, name)
		}
		if props != nil {
			s["required"] = required
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		problems = append(problems, strictify(items, path+"[]", optional)...)
	}
	if alts, ok := s["anyOf"].([]any); ok {
		for i, alt := range alts {
			if m, ok := alt.(map[string]any); ok {
				problems = append(problems, strictify(m, fmt.Sprintf("%s|%d", path, i), optional)...)
			}
		}
	}
	return problems
}

// nullable lets a property be null: ["T", "null"], and null in its enum.
func nullable(s map[string]any) {
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
	case []any:
		for _, x := range t {
			if x == "null" {
				return
			}
		}
		s["type"] = append(t, "null")
	}
	if e, ok := s["enum"].([]any); ok {
		s["enum"] = append(e, nil)
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// dropNulls removes, from a strict tool's arguments, members that are null
// and were optional before strict mode. Arguments that do not parse pass
// through unchanged: the executor rejects them.
func dropNulls(args json.RawMessage, optional map[string]map[string]bool) json.RawMessage {
	out, err := dropNullsAt(args, "", optional)
	if err != nil {
		return args
	}
	return out
}

func dropNullsAt(raw []byte, path string, optional map[string]map[string]bool) ([]byte, error) {
	var obj map[string]jsontext.Value
	if err := jsonv2.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	changed := false
	for name, v := range obj {
		switch {
		case optional[path][name] && strings.TrimSpace(string(v)) == "null":
			delete(obj, name)
			changed = true
		case v.Kind() == '{':
			sub, err := dropNullsAt(v, join(path, name), optional)
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(sub, v) {
				obj[name] = sub
				changed = true
			}
		}
	}
	if !changed {
		return raw, nil
	}
	return jsonv2.Marshal(obj, jsonv2.Deterministic(true))
}
