// Package anthropic speaks Anthropic's Messages API tool format for a keel
// tool set: tool definitions (name, description, input_schema), tool_use
// blocks in, tool_result blocks out. It imports no Anthropic SDK.
package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/keelgen/keel/internal/forms"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/resultjson"
)

// Tool is one entry of a Messages request's "tools".
type Tool struct {
	// Type is set only on the tool search tool (a server tool); a keel
	// tool, a custom tool, has none.
	Type        string          `json:"type,omitempty"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Strict asks Anthropic to sample the input from the schema's grammar.
	Strict bool `json:"strict,omitempty"`
	// DeferLoading leaves the tool out of the prompt until the model finds
	// it with the tool search tool.
	DeferLoading bool `json:"defer_loading,omitempty"`
}

// SearchTool is Anthropic's regex tool search tool, which a request with
// deferred tools carries so the model can find them.
func SearchTool() Tool {
	return Tool{Type: "tool_search_tool_regex_20251119", Name: "tool_search_tool_regex"}
}

// Options choose the form of the definitions. The zero value is keel's
// schemas as generated.
type Options struct {
	// Strict sets strict on each tool whose schema Anthropic's strict mode
	// can take, in the strict form (bounds it does not take said in words in
	// the descriptions; the executor enforces them still), as far as one
	// request's budget goes (20 strict tools, 24 optional and 16 union-typed
	// parameters over them). The budget goes first to the tools loaded up
	// front, then to deferred ones, each in the order of tools; a tool past
	// it, or one strict mode cannot express, is offered as without Strict.
	// keelgen -targets anthropic-strict says which tools get it.
	Strict bool
	// StrictFirst serves the named tools before all others, in the order
	// named (the tools whose arguments must be exact: a scale_deployment
	// before a catalog lookup). A name that is not among the tools is an
	// error. It implies Strict.
	StrictFirst []string
}

// Tools returns the definitions of tools (runtime.ModelTools from generated
// code), in their order, so the prompt cache survives a change of options.
// Tools the set defers (keelgen -defer) carry defer_loading, and the tool
// search tool comes last.
func Tools(tools []runtime.ModelTool, opts Options) ([]Tool, error) {
	out := make([]Tool, 0, len(tools)+1)
	deferred := false
	for _, t := range tools {
		out = append(out, Tool{Name: t.Name, Description: t.DescriptionForModel(), InputSchema: t.Parameters, DeferLoading: t.Deferred})
		deferred = deferred || t.Deferred
	}
	if deferred {
		out = append(out, SearchTool())
	}
	if !opts.Strict && len(opts.StrictFirst) == 0 {
		return out, nil
	}
	return out, strict(out, tools, opts.StrictFirst)
}

// strict spends the strict budget on defs, the named tools first.
func strict(defs []Tool, tools []runtime.ModelTool, first []string) error {
	order := make([]int, 0, len(tools))
	chosen := make(map[string]bool, len(first))
	for _, name := range first {
		i := slices.IndexFunc(tools, func(t runtime.ModelTool) bool { return t.Name == name })
		if i < 0 {
			return fmt.Errorf("anthropic: Options.StrictFirst: no tool %q in the set", name)
		}
		if !chosen[name] {
			chosen[name] = true
			order = append(order, i)
		}
	}
	for i, t := range tools {
		if !chosen[t.Name] {
			order = append(order, i)
		}
	}
	candidates := make([]forms.AnthropicCandidate, len(order))
	for j, i := range order {
		// A named tool competes as one loaded up front, even if deferred.
		candidates[j] = forms.AnthropicCandidate{Name: tools[i].Name, Input: tools[i].Parameters, Deferred: tools[i].Deferred && !chosen[tools[i].Name]}
	}
	for j, slot := range forms.AnthropicStrictPlan(candidates) {
		if slot.Strict {
			defs[order[j]].InputSchema, defs[order[j]].Strict = slot.Schema, true
		}
	}
	return nil
}

// Problems says why strict mode cannot take schema; none when it can.
func Problems(schema json.RawMessage) []string {
	_, _, problems := forms.AnthropicStrict(schema)
	return problems
}

// ToolUse is a tool_use content block of an assistant message.
type ToolUse struct {
	Type  string          `json:"type"` // "tool_use"
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"` // an object, as the model sent it
}

// Call turns a tool_use block into a keel ToolCall; the executor checks it.
func Call(u ToolUse) runtime.ToolCall {
	return runtime.ToolCall{ID: u.ID, Name: u.Name, Arguments: u.Input}
}

// ToolResultBlock is the tool_result content block that answers a tool_use:
// one text block (the result JSON, as the official SDK builds it), then the
// result's content blocks that a tool_result can carry.
type ToolResultBlock struct {
	Type      string          `json:"type"` // "tool_result"
	ToolUseID string          `json:"tool_use_id"`
	Content   []ResultContent `json:"content"`
	IsError   bool            `json:"is_error"`
}

// ResultContent is one block of a tool_result's content: text, an image, or
// a document (a PDF, or plain text).
type ResultContent struct {
	Type   string  `json:"type"` // "text", "image" or "document"
	Text   string  `json:"text,omitempty"`
	Source *Source `json:"source,omitempty"`
	Title  string  `json:"title,omitempty"` // a document's
}

// Source is an image's or a document's data: base64 bytes, plain text, or
// a URL of a PDF.
type Source struct {
	Type      string `json:"type"` // "base64", "text" or "url"
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// Result answers a call: the result JSON (with its code when it failed), and
// is_error set for every failed result. Content blocks follow as Anthropic
// takes them in a tool_result: an image (JPEG, PNG, GIF, WebP) as an image
// block; a PDF, embedded or linked over https, and a text resource as a
// document. Audio and other blobs have no place there: the result JSON
// describes them (type, MIME type, size, URI) and says so.
func Result(r runtime.ToolResult) ToolResultBlock {
	content := []ResultContent{{Type: "text", Text: resultjson.Text(r, omitted)}}
	for _, c := range r.Content {
		if b, ok := resultContent(c); ok {
			content = append(content, b)
		}
	}
	return ToolResultBlock{Type: "tool_result", ToolUseID: r.CallID, IsError: !r.OK, Content: content}
}

// anthropicImages are the image types Anthropic's image blocks take.
var anthropicImages = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

func resultContent(c runtime.Content) (ResultContent, bool) {
	title := c.Name
	if title == "" {
		title = c.URI
	}
	switch {
	case c.Kind == runtime.ContentImage && anthropicImages[c.MIMEType]:
		return ResultContent{Type: "image", Source: &Source{Type: "base64", MediaType: c.MIMEType, Data: base64.StdEncoding.EncodeToString(c.Data)}}, true
	case c.Kind == runtime.ContentResource && c.MIMEType == "application/pdf" && len(c.Data) > 0:
		return ResultContent{Type: "document", Title: title, Source: &Source{Type: "base64", MediaType: "application/pdf", Data: base64.StdEncoding.EncodeToString(c.Data)}}, true
	case c.Kind == runtime.ContentResource && c.Text != "":
		return ResultContent{Type: "document", Title: title, Source: &Source{Type: "text", MediaType: "text/plain", Data: c.Text}}, true
	case c.Kind == runtime.ContentResourceLink && c.MIMEType == "application/pdf" && strings.HasPrefix(c.URI, "https://"):
		return ResultContent{Type: "document", Title: title, Source: &Source{Type: "url", URL: c.URI}}, true
	}
	return ResultContent{}, false
}

// omitted says why a block is not in a tool_result.
var omitted = resultjson.Omissions{
	Carries: func(c runtime.Content) bool { _, ok := resultContent(c); return ok },
	Place:   "Anthropic's tool_result",
	Images:  "Anthropic takes JPEG, PNG, GIF and WebP images only",
	Links:   "a link: Anthropic's tool_result reads only PDFs by URL",
}.Of
