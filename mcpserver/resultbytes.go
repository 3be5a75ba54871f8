package mcpserver

import (
	"encoding/json"
	"maps"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keel writes a tools/call result's bytes itself: its data is already the
// JSON the executor's generated writer produced and checked, which the
// SDK's json.Marshal of a CallToolResult would compact and copy again (a
// third of the HTTP server's CPU). The fields and their order are the
// SDK's, so a client reads the same result; what keel cannot write this
// way (an input request, a content block of its own with _meta) the SDK
// marshals, as before.

// appendCallResult appends the result object of res, complete; on the
// 2026-07-28 revision it names its resultType first and the server in its
// _meta, as the SDK marks the results it answers. It reports false for a
// result it leaves to json.Marshal.
func (h *handler) appendCallResult(out []byte, res *mcp.CallToolResult, revision bool) ([]byte, bool) {
	if res.InputRequests != nil || res.RequestState != "" {
		return out, false
	}
	data, isRaw := res.StructuredContent.(json.RawMessage)
	if res.StructuredContent != nil && !isRaw {
		return out, false
	}
	out = append(out, '{')
	if revision {
		out = append(out, `"resultType":"complete",`...)
	}
	if meta, ok := h.metaBytes(res.Meta, revision); !ok {
		return out, false
	} else if meta != nil {
		out = append(out, `"_meta":`...)
		out = append(out, meta...)
		out = append(out, ',')
	}
	out = append(out, `"content":`...)
	if res.Content == nil {
		out = append(out, "null"...)
	} else {
		out = append(out, '[')
		for i, c := range res.Content {
			if i > 0 {
				out = append(out, ',')
			}
			if t, ok := c.(*mcp.TextContent); ok && t.Meta == nil && t.Annotations == nil {
				out = append(out, `{"type":"text","text":`...)
				var err error
				if out, err = jsontext.AppendQuote(out, t.Text); err != nil {
					return out, false // not UTF-8: the SDK's marshal replaces what it must
				}
				out = append(out, '}')
				continue
			}
			b, err := json.Marshal(c) // an image, a resource: rare, and the SDK's own form
			if err != nil {
				return out, false
			}
			out = append(out, b...)
		}
		out = append(out, ']')
	}
	if isRaw {
		out = append(out, `,"structuredContent":`...)
		if len(data) == 0 {
			out = append(out, "null"...)
		} else {
			out = append(out, data...) // the executor's checked, compact JSON
		}
	}
	if res.IsError {
		out = append(out, `,"isError":true`...)
	}
	return append(out, '}'), true
}

// resultSize guesses the bytes of res's answer, so that its buffer is
// allocated once: its data, its texts with room for their escapes, and
// the envelope.
func resultSize(res *mcp.CallToolResult) int {
	n := 192
	if data, ok := res.StructuredContent.(json.RawMessage); ok {
		n += len(data)
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			n += len(t.Text) + len(t.Text)/4 + 32
		}
	}
	return n
}

// metaBytes is a result's _meta as JSON, with the server's name on the
// 2026-07-28 revision (nil for none): that name alone, every such
// result's, written once; any other through json.Marshal.
func (h *handler) metaBytes(m mcp.Meta, revision bool) ([]byte, bool) {
	if revision {
		if _, named := m[mcp.MetaKeyServerInfo]; !named {
			if len(m) == 0 {
				h.metaCache.once.Do(func() {
					h.metaCache.serverInfo, _ = json.Marshal(map[string]any{mcp.MetaKeyServerInfo: h.impl})
				})
				return h.metaCache.serverInfo, h.metaCache.serverInfo != nil
			}
			m = maps.Clone(m)
			m[mcp.MetaKeyServerInfo] = h.impl
		}
	}
	if len(m) == 0 {
		return nil, true
	}
	b, err := json.Marshal(m)
	return b, err == nil
}

// metaCache keeps the _meta that names the server (metaBytes).
type metaCache struct {
	once       sync.Once
	serverInfo []byte
}
