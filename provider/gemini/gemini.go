// Package gemini speaks Google Gemini's function-calling format for a keel
// tool set: functionDeclarations with the parameters as JSON Schema
// (parametersJsonSchema, which takes keel's schema as generated) or, for an
// API that has only the older parameters field, in its OpenAPI subset;
// functionCall parts in, functionResponse parts out. It imports no Google SDK: it writes and reads
// their JSON, which google.golang.org/genai's types read and write too.
package gemini

import (
	"encoding/json"
	"fmt"
	"path"

	"github.com/keelgen/keel/internal/forms"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/resultjson"
)

// FunctionDeclaration is one entry of a Tool's functionDeclarations: its
// parameters in one of the two fields, never both.
type FunctionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
	Parameters           json.RawMessage `json:"parameters,omitempty"`
}

// Tool is one entry of a request's "tools": the set's declarations.
type Tool struct {
	FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations"`
}

// Options choose the form of the declarations. The zero value is keel's
// schemas as generated, in parametersJsonSchema.
type Options struct {
	// OpenAPI writes the parameters in the older parameters field, for an
	// API version or endpoint that has no parametersJsonSchema: the closest
	// form its OpenAPI 3.0 subset takes (what it has no keyword for is said
	// in the member's description, in words; Problems and keelgen -targets
	// gemini list it). The executor still enforces keel's schema as
	// generated.
	OpenAPI bool
}

// Declarations returns the function declarations of tools
// (runtime.ModelTools from generated code), each description naming the
// tool's declared error codes.
func Declarations(tools []runtime.ModelTool, opts Options) ([]FunctionDeclaration, error) {
	out := make([]FunctionDeclaration, 0, len(tools))
	for _, t := range tools {
		d := FunctionDeclaration{Name: t.Name, Description: t.DescriptionForModel(), ParametersJSONSchema: t.Parameters}
		if opts.OpenAPI {
			params, _, err := forms.GeminiParameters(t.Parameters)
			if err != nil {
				return nil, fmt.Errorf("tool %s: %w", t.Name, err)
			}
			if noArguments(params) {
				params = nil // Gemini refuses an OBJECT without properties; a function may take none
			}
			d.ParametersJSONSchema, d.Parameters = nil, params
		}
		out = append(out, d)
	}
	return out, nil
}

// noArguments reports whether parameters declare no property at all.
func noArguments(params json.RawMessage) bool {
	var p struct {
		Properties map[string]json.RawMessage `json:"properties"`
		AnyOf      json.RawMessage            `json:"anyOf"`
	}
	return json.Unmarshal(params, &p) == nil && len(p.Properties) == 0 && p.AnyOf == nil
}

// Tools returns the set as one Tool of a request.
func Tools(tools []runtime.ModelTool, opts Options) ([]Tool, error) {
	decls, err := Declarations(tools, opts)
	if err != nil {
		return nil, err
	}
	return []Tool{{FunctionDeclarations: decls}}, nil
}

// Problems says what the OpenAPI form changes of schema (said in words, or
// dropped); none when it takes it whole.
func Problems(schema json.RawMessage) []string {
	_, changed, err := forms.GeminiParameters(schema)
	if err != nil {
		return []string{err.Error()}
	}
	return changed
}

// FunctionCall is a functionCall part of a model's reply, its args kept as
// the bytes that came.
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Call turns a functionCall into a keel ToolCall; the executor checks
// it. Gemini's calls may carry no id; fallbackID stands in: name this
// one call with it (the turn and the part's index), since an executor
// made runtime.WithOutcomes answers a write's id sent again with its first
// outcome. A call without args is a call with {}, as on every path.
func Call(c FunctionCall, fallbackID string) runtime.ToolCall {
	id := c.ID
	if id == "" {
		id = fallbackID
	}
	return runtime.ToolCall{ID: id, Name: c.Name, Arguments: c.Args}
}

// FunctionResponse is the functionResponse part that answers a call. Its
// response must be an object: {"output": data} on success, {"error": the
// result's error, its stable code included} on failure, as Gemini reads
// them; a result's content blocks are described under "content" and, where
// Gemini takes them, sent as parts.
type FunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
	Parts    []ResponsePart  `json:"parts,omitempty"`
}

// ResponsePart is one multimodal part of a function response: inline data.
type ResponsePart struct {
	InlineData *InlineData `json:"inlineData,omitempty"`
}

// InlineData is bytes of a MIME type (base64 in JSON).
type InlineData struct {
	MIMEType    string `json:"mimeType"`
	Data        []byte `json:"data"`
	DisplayName string `json:"displayName,omitempty"`
}

// Result answers a call with its result. Content blocks that Gemini's
// multimodal function responses take follow as inline parts: an image
// (PNG, JPEG, WebP), a PDF, a text resource as text/plain. Audio, other
// blobs and links are described in the response and marked omitted.
func Result(r runtime.ToolResult) FunctionResponse {
	blocks := resultjson.Describe(r.Content, geminiOmitted)
	var body any = struct {
		Output  json.RawMessage    `json:"output"`
		Content []resultjson.Block `json:"content,omitempty"`
	}{resultjson.Data(r), blocks}
	if !r.OK {
		body = struct {
			Error *runtime.ToolError `json:"error"`
		}{r.Error}
	}
	b, err := json.Marshal(body)
	if err != nil { // unreachable: a ToolResult's parts encode
		b = []byte(`{"error":{"code":"tool_internal_error","message":"The result could not be encoded."}}`)
	}
	out := FunctionResponse{ID: r.CallID, Name: r.ToolName, Response: b}
	for _, c := range r.Content {
		if p, ok := geminiPart(c); ok {
			out.Parts = append(out.Parts, p)
		}
	}
	return out
}

// geminiImages are the image types Gemini's function responses take.
var geminiImages = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true}

func geminiPart(c runtime.Content) (ResponsePart, bool) {
	name := c.Name
	if name == "" {
		name = path.Base(c.URI)
	}
	switch {
	case c.Kind == runtime.ContentImage && geminiImages[c.MIMEType]:
		return ResponsePart{InlineData: &InlineData{MIMEType: c.MIMEType, Data: c.Data}}, true
	case c.Kind == runtime.ContentResource && c.MIMEType == "application/pdf" && len(c.Data) > 0:
		return ResponsePart{InlineData: &InlineData{MIMEType: "application/pdf", Data: c.Data, DisplayName: name}}, true
	case c.Kind == runtime.ContentResource && c.Text != "":
		return ResponsePart{InlineData: &InlineData{MIMEType: "text/plain", Data: []byte(c.Text), DisplayName: name}}, true
	}
	return ResponsePart{}, false
}

var geminiOmitted = resultjson.Omissions{
	Carries: func(c runtime.Content) bool { _, ok := geminiPart(c); return ok },
	Place:   "a Gemini function response",
	Images:  "Gemini's function responses take PNG, JPEG and WebP images only",
	Links:   "a link: Gemini reads only its own file URIs",
}.Of
