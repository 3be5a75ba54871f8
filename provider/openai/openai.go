// Package openai speaks OpenAI's tool format for a keel tool set: tool
// definitions for Chat Completions and for the Responses API, with an
// optional strict mode; tool calls in (arguments arrive as a JSON string);
// results out. It imports no OpenAI SDK: it writes and reads their JSON.
package openai

import (
	"encoding/base64"
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/keelgen/keel/internal/forms"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/resultjson"
)

// Options configure an Adapter.
type Options struct {
	// Strict offers every tool whose schema strict mode can express with
	// "strict": true, in the form strict mode requires. Others stay
	// non-strict; Problems (and keelgen -targets openai-strict) say why.
	Strict bool
	// Limits are the executor's caps on arguments (runtime.WithLimits); a
	// zero field takes runtime.DefaultLimits(). Arguments over them are
	// handed on untouched, for the executor to reject, before any walk.
	Limits runtime.Limits
}

// Adapter converts between a keel tool set and OpenAI's wire format.
type Adapter struct {
	tools  []tool
	byName map[string]*tool
	limits runtime.Limits
}

type tool struct {
	model  runtime.ModelTool
	params json.RawMessage // what the model is shown
	strict bool
	// nulls records where strict mode made an optional member required but
	// nullable, so a null the model sends there is read as "absent" again.
	nulls *forms.NullShape
}

// New prepares the definitions of tools (runtime.ModelTools from generated
// code) once.
func New(tools []runtime.ModelTool, opts Options) *Adapter {
	a := &Adapter{byName: map[string]*tool{}, limits: runtime.DefaultLimits()}
	if opts.Limits.MaxArgumentBytes > 0 {
		a.limits.MaxArgumentBytes = opts.Limits.MaxArgumentBytes
	}
	if opts.Limits.MaxDepth > 0 {
		a.limits.MaxDepth = opts.Limits.MaxDepth
	}
	for _, m := range tools {
		t := tool{model: m, params: m.Parameters}
		if opts.Strict {
			if s, nulls, problems := strictSchema(m.Parameters); len(problems) == 0 {
				t.params, t.strict, t.nulls = s, true, nulls
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

// ResponsesTool is one entry of a Responses API request's "tools" (flat):
// a function, or, for a set with deferred tools (keelgen -defer), a
// namespace of deferred functions and the tool_search tool.
type ResponsesTool struct {
	Type         string          `json:"type"` // "function", "namespace" or "tool_search"
	Name         string          `json:"name,omitempty"`
	Description  string          `json:"description,omitempty"`
	Parameters   json.RawMessage `json:"parameters,omitempty"`
	Strict       bool            `json:"strict"` // a function's, always sent: an absent one reads as strict where it can
	DeferLoading bool            `json:"defer_loading,omitempty"`
	Tools        []ResponsesTool `json:"tools,omitempty"` // a namespace's functions
}

// MarshalJSON writes strict on functions only.
func (t ResponsesTool) MarshalJSON() ([]byte, error) {
	type plain ResponsesTool
	if t.Type == "function" {
		return json.Marshal(plain(t))
	}
	return json.Marshal(struct {
		plain
		Strict bool `json:"strict,omitempty"`
	}{plain: plain(t)})
}

// ChatTools returns the Chat Completions tool definitions.
func (a *Adapter) ChatTools() []ChatTool {
	out := make([]ChatTool, 0, len(a.tools))
	for _, t := range a.tools {
		out = append(out, ChatTool{Type: "function", Function: FunctionDefinition{
			Name: t.model.Name, Description: t.model.DescriptionForModel(), Parameters: t.params, Strict: t.strict}})
	}
	return out
}

// ResponsesTools returns the Responses API tool definitions. The tools the
// set defers (keelgen -defer) go, with defer_loading, into one namespace per
// handler package, after the tools loaded up front and in a stable order
// (so the prompt cache survives), with the tool_search tool last.
func (a *Adapter) ResponsesTools() []ResponsesTool {
	out := make([]ResponsesTool, 0, len(a.tools))
	namespaces := map[string]int{} // name → index in out
	for _, t := range a.tools {
		fn := ResponsesTool{Type: "function", Name: t.model.Name, Description: t.model.DescriptionForModel(), Parameters: t.params, Strict: t.strict}
		if !t.model.Deferred {
			out = append(out, fn)
		}
	}
	var names []string
	for _, t := range a.tools {
		if t.model.Deferred && !slices.Contains(names, t.model.Namespace) {
			names = append(names, t.model.Namespace)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		namespaces[n] = len(out)
		out = append(out, ResponsesTool{Type: "namespace", Name: n, Description: "Tools of " + n + "."})
	}
	for _, t := range a.tools {
		if t.model.Deferred {
			i := namespaces[t.model.Namespace]
			out[i].Tools = append(out[i].Tools, ResponsesTool{Type: "function", Name: t.model.Name, Description: t.model.DescriptionForModel(),
				Parameters: t.params, Strict: t.strict, DeferLoading: true})
		}
	}
	if len(names) > 0 {
		out = append(out, ResponsesTool{Type: "tool_search"})
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

// Call turns a call's id, name and arguments string, as either API
// sends them, into a keel ToolCall. Nothing is checked here: the executor
// does that. For a strict tool, a null the model sent for a member that was
// optional before strict mode made it required is removed again.
func (a *Adapter) Call(id, name, arguments string) runtime.ToolCall {
	args := json.RawMessage(arguments)
	if t := a.byName[name]; t != nil && t.strict {
		args = t.nulls.Drop(args, a.limits.MaxArgumentBytes, a.limits.MaxDepth)
	}
	return runtime.ToolCall{ID: id, Name: name, Arguments: args}
}

// ChatCall converts a Chat Completions tool call.
func (a *Adapter) ChatCall(c ChatToolCall) runtime.ToolCall {
	return a.Call(c.ID, c.Function.Name, c.Function.Arguments)
}

// ResponsesCall converts a Responses API function_call item.
func (a *Adapter) ResponsesCall(c FunctionCall) runtime.ToolCall {
	return a.Call(c.CallID, c.Name, c.Arguments)
}

// ChatToolMessage is the Chat Completions message that answers a call.
type ChatToolMessage struct {
	Role       string `json:"role"` // "tool"
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
}

// ChatResult answers a call in Chat Completions: the result JSON, with its
// code when it failed. A tool message carries text only, so content blocks
// are described in the JSON (type, MIME type, size, URI) and marked omitted.
func ChatResult(r runtime.ToolResult) ChatToolMessage {
	return ChatToolMessage{Role: "tool", ToolCallID: r.CallID, Content: resultjson.Text(r, func(runtime.Content) string {
		return "OpenAI Chat Completions tool messages carry text only"
	})}
}

// FunctionCallOutput answers a call in the Responses API. Its output is
// the result JSON, a string; with content blocks the Responses API can
// read, it is a list instead: the JSON as input_text, then the blocks.
type FunctionCallOutput struct {
	Type   string `json:"type"` // "function_call_output"
	CallID string `json:"call_id"`
	Output string `json:"-"`
	// Items follow Output when the result carries content blocks.
	Items []OutputItem `json:"-"`
}

// OutputItem is one item of a function_call_output's list.
type OutputItem struct {
	Type     string `json:"type"` // "input_text", "input_image" or "input_file"
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"` // a data: URL
	Filename string `json:"filename,omitempty"`
	FileData string `json:"file_data,omitempty"` // a data: URL
	FileURL  string `json:"file_url,omitempty"`
}

// MarshalJSON writes output as a string, or as the list when there are items.
func (o FunctionCallOutput) MarshalJSON() ([]byte, error) {
	type wire struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output any    `json:"output"`
	}
	if len(o.Items) == 0 {
		return json.Marshal(wire{o.Type, o.CallID, o.Output})
	}
	return json.Marshal(wire{o.Type, o.CallID, append([]OutputItem{{Type: "input_text", Text: o.Output}}, o.Items...)})
}

// ResponsesResult answers a call in the Responses API. Content blocks follow
// as its function_call_output takes them: an image (PNG, JPEG, WebP, GIF) as
// input_image, a PDF (embedded, or linked over https) as input_file, a text
// resource as input_text headed by its URI. Audio and other blobs have no
// place there: the result JSON describes them and says so.
func ResponsesResult(r runtime.ToolResult) FunctionCallOutput {
	out := FunctionCallOutput{Type: "function_call_output", CallID: r.CallID, Output: resultjson.Text(r, responsesOmitted)}
	for _, c := range r.Content {
		if item, ok := outputItem(c); ok {
			out.Items = append(out.Items, item)
		}
	}
	return out
}

// responsesImages are the image types input_image takes.
var responsesImages = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "image/gif": true}

func outputItem(c runtime.Content) (OutputItem, bool) {
	dataURL := func() string { return "data:" + c.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(c.Data) }
	switch {
	case c.Kind == runtime.ContentImage && responsesImages[c.MIMEType]:
		return OutputItem{Type: "input_image", ImageURL: dataURL()}, true
	case c.Kind == runtime.ContentResource && c.MIMEType == "application/pdf" && len(c.Data) > 0:
		return OutputItem{Type: "input_file", Filename: path.Base(c.URI), FileData: dataURL()}, true
	case c.Kind == runtime.ContentResource && c.Text != "":
		return OutputItem{Type: "input_text", Text: "Resource " + c.URI + " (" + c.MIMEType + "):\n" + c.Text}, true
	case c.Kind == runtime.ContentResourceLink && c.MIMEType == "application/pdf" && strings.HasPrefix(c.URI, "https://"):
		return OutputItem{Type: "input_file", FileURL: c.URI}, true
	}
	return OutputItem{}, false
}

var responsesOmitted = resultjson.Omissions{
	Carries: func(c runtime.Content) bool { _, ok := outputItem(c); return ok },
	Place:   "the Responses API's function_call_output",
	Images:  "the Responses API takes PNG, JPEG, WebP and GIF images only",
	Links:   "a link: the Responses API reads only PDFs by URL",
}.Of

// strictSchema rewrites schema into the form OpenAI's strict mode requires:
// every object closed, every property required, optional properties
// nullable. It returns the problems that make that impossible instead,
// with the path of each. nulls says where a null the model sends means
// "absent".
func strictSchema(schema json.RawMessage) (out json.RawMessage, nulls *forms.NullShape, problems []string) {
	return forms.OpenAIStrict(schema)
}

// Problems says why a schema cannot be offered in strict mode; none when it
// can.
func Problems(schema json.RawMessage) []string { return forms.OpenAIStrictProblems(schema) }
