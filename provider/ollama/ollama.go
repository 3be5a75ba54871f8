// Package ollama speaks Ollama's /api/chat tool format for a keel tool set.
// Ollama's server reads only part of JSON Schema (per property: type,
// description, enum, items) and silently drops the rest, such as pattern,
// anyOf, const, additionalProperties and nested properties. Tools emits a
// safe form that keeps the lost constraints in the description text, and
// Problems says what a schema loses, so keelgen can warn at generate time. The
// executor still validates every call against the full schema.
package ollama

import (
	"encoding/json"
	"fmt"

	"github.com/keelgen/keel/internal/forms"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/resultjson"
)

// Tool is one entry of an /api/chat request's "tools".
type Tool struct {
	Type     string   `json:"type"` // "function"
	Function Function `json:"function"`
}

// Function is the function definition of a Tool.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Options are the choices of the definitions: Ollama's form has none yet;
// the zero value is the safe form. Every adapter takes one, so a harness
// that speaks several reads the same shape.
type Options struct{}

// Tools returns the safe definitions of tools.
func Tools(tools []runtime.ModelTool, opts Options) ([]Tool, error) {
	out := make([]Tool, 0, len(tools))
	for _, t := range tools {
		params, _, err := forms.OllamaSafe(t.Parameters)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		out = append(out, Tool{Type: "function", Function: Function{Name: t.Name, Description: t.DescriptionForModel(), Parameters: params}})
	}
	return out, nil
}

// Problems lists what Ollama would drop from schema ("incident_id:
// pattern"), which the safe form repeats in descriptions.
func Problems(schema json.RawMessage) []string { return forms.OllamaLost(schema) }

// ToolCall is one entry of an assistant message's "tool_calls".
type ToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int             `json:"index,omitempty"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // an object
	} `json:"function"`
}

// Call turns one tool call into a keel ToolCall. Ollama's calls may carry no
// id; fallbackID (the message's index and the call's) stands in: it must
// name this one call, since an executor made runtime.WithOutcomes answers
// a write's id sent again with its first outcome.
func Call(c ToolCall, fallbackID string) runtime.ToolCall {
	id := c.ID
	if id == "" {
		id = fallbackID
	}
	return runtime.ToolCall{ID: id, Name: c.Function.Name, Arguments: c.Function.Arguments}
}

// Message is the role "tool" message that answers a call.
type Message struct {
	Role     string `json:"role"` // "tool"
	Content  string `json:"content"`
	ToolName string `json:"tool_name"`
	// Images are the result's PNG and JPEG images, for a vision model
	// (base64 in JSON, as Ollama's api.Message has them).
	Images [][]byte `json:"images,omitempty"`
}

// Result answers a call with the result JSON, with its code when it failed.
// A PNG or JPEG image goes in images; every other block is described in the
// JSON and marked omitted: a tool message has no place for it.
func Result(r runtime.ToolResult) Message {
	m := Message{Role: "tool", Content: resultjson.Text(r, ollamaOmitted), ToolName: r.ToolName}
	for _, c := range r.Content {
		if ollamaImage(c) {
			m.Images = append(m.Images, c.Data)
		}
	}
	return m
}

func ollamaImage(c runtime.Content) bool {
	return c.Kind == runtime.ContentImage && (c.MIMEType == "image/png" || c.MIMEType == "image/jpeg")
}

func ollamaOmitted(c runtime.Content) string {
	if ollamaImage(c) {
		return ""
	}
	return "an Ollama tool message carries text and PNG or JPEG images only"
}
