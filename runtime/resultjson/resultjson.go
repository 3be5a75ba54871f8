// Package resultjson is the one text every adapter gives a model for a
// tool's result: the ToolResult as JSON, so a failed result carries its
// stable code. Text from outside the system (ToolResult.Untrusted) is set
// between marks the text cannot forge. Content blocks are described in it (kind, MIME type, size,
// URI, name), never their bytes: an adapter sends the blocks in its
// provider's own shape, and a block the format has no place for is marked
// so, in words, for the model.
package resultjson

import (
	"encoding/json"

	"github.com/keelgen/keel/runtime"
)

// Content is what a model reads back for a result whose blocks, if any,
// all go in the provider's own shape.
func Content(r runtime.ToolResult) string {
	return Text(r, func(runtime.Content) string { return "" })
}

// Text is what a model reads back for any result. omitted says, for each
// block, why the provider's format cannot carry it ("" when it can).
func Text(r runtime.ToolResult, omitted func(runtime.Content) string) string {
	out := result{CallID: r.CallID, ToolName: r.ToolName, ToolVersion: r.ToolVersion, OK: r.OK, Data: Data(r), Error: r.Error,
		Content: Describe(r.Content, omitted)}
	b, err := json.Marshal(out)
	if err != nil { // unreachable: every field of a ToolResult encodes
		return `{"ok":false,"error":{"code":"tool_internal_error","message":"The result could not be encoded."}}`
	}
	return string(b)
}

// result is runtime.ToolResult with its blocks described.
type result struct {
	CallID      string             `json:"call_id"`
	ToolName    string             `json:"tool_name"`
	ToolVersion *string            `json:"tool_version"`
	OK          bool               `json:"ok"`
	Data        json.RawMessage    `json:"data"`
	Content     []Block            `json:"content,omitempty"`
	Error       *runtime.ToolError `json:"error"`
}

// Block describes one content block for the model, without its bytes.
type Block struct {
	Type     runtime.ContentKind `json:"type"`
	MIMEType string              `json:"mime_type"`
	Bytes    int                 `json:"bytes"`
	URI      string              `json:"uri,omitempty"`
	Name     string              `json:"name,omitempty"`
	Omitted  string              `json:"omitted,omitempty"`
}

// Describe describes blocks; omitted says why the provider cannot carry one.
func Describe(blocks []runtime.Content, omitted func(runtime.Content) string) []Block {
	var out []Block
	for _, c := range blocks {
		out = append(out, Block{Type: c.Kind, MIMEType: c.MIMEType, Bytes: len(c.Data) + len(c.Text), URI: c.URI, Name: c.Name, Omitted: omitted(c)})
	}
	return out
}

// Omissions says, for a provider, why it leaves a block out: "" for one it
// carries; else what it takes of images, or of links, or that its format
// (place, "Anthropic's tool_result") has no place for the kind.
type Omissions struct {
	Carries func(runtime.Content) bool
	Place   string // "Anthropic's tool_result"
	Images  string // "Anthropic takes JPEG, PNG, GIF and WebP images only"
	Links   string // "a link: Anthropic's tool_result reads only PDFs by URL"
}

// Of is the reason c is left out, or "".
func (o Omissions) Of(c runtime.Content) string {
	switch {
	case o.Carries(c):
		return ""
	case c.Kind == runtime.ContentImage:
		return o.Images
	case c.Kind == runtime.ContentResourceLink:
		return o.Links
	}
	return o.Place + " has no place for " + string(c.Kind) + " of this type"
}
