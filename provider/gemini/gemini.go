// Package gemini speaks Google Gemini's function-calling format for a keel
// tool set: functionDeclarations with the parameters as JSON Schema
// (parametersJsonSchema, which takes keel's schema as generated; the older
// parameters field takes only an OpenAPI subset), functionCall parts in,
// functionResponse parts out. It imports no Google SDK: it writes and reads
// their JSON, which google.golang.org/genai's types read and write too.
package gemini

import (
	"encoding/json"

	"github.com/keelgen/keel/runtime"
)

// FunctionDeclaration is one entry of a Tool's functionDeclarations.
type FunctionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
}

// Tool is one entry of a request's "tools": the set's declarations.
type Tool struct {
	FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations"`
}

// Declarations returns the function declarations of tools
// (runtime.ModelTools from generated code), with keel's schemas unchanged
// and each description naming the tool's declared error codes.
func Declarations(tools []runtime.ModelTool) []FunctionDeclaration {
	out := make([]FunctionDeclaration, 0, len(tools))
	for _, t := range tools {
		out = append(out, FunctionDeclaration{Name: t.Name, Description: t.DescriptionForModel(), ParametersJSONSchema: t.Parameters})
	}
	return out
}

// Tools returns the set as one Tool of a request.
func Tools(tools []runtime.ModelTool) []Tool {
	return []Tool{{FunctionDeclarations: Declarations(tools)}}
}

// FunctionCall is a functionCall part of a model's reply, its args kept as
// the bytes that came.
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// ToolCall turns a functionCall into a keel ToolCall; the executor checks
// it. Gemini's calls may carry no id; fallbackID (the part's index, say)
// stands in. A call without args is the executor's invalid_arguments, as
// on every path: send {} for a tool without required input.
func ToolCall(c FunctionCall, fallbackID string) runtime.ToolCall {
	id := c.ID
	if id == "" {
		id = fallbackID
	}
	return runtime.ToolCall{ID: id, Name: c.Name, Arguments: c.Args}
}

// FunctionResponse is the functionResponse part that answers a call. Its
// response must be an object: {"output": data} on success, {"error": the
// result's error, its stable code included} on failure, as Gemini reads
// them.
type FunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// Response answers a call with its result.
func Response(r runtime.ToolResult) FunctionResponse {
	var body any = struct {
		Output json.RawMessage `json:"output"`
	}{r.Data}
	if !r.OK {
		body = struct {
			Error *runtime.ToolError `json:"error"`
		}{r.Error}
	}
	b, err := json.Marshal(body)
	if err != nil { // unreachable: a ToolResult's parts encode
		b = []byte(`{"error":{"code":"tool_internal_error","message":"The result could not be encoded."}}`)
	}
	return FunctionResponse{ID: r.CallID, Name: r.ToolName, Response: b}
}
