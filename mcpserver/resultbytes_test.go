package mcpserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keel's own bytes for a tools/call result read as the SDK's json.Marshal
// of the same result does, field for field, on both revisions' forms.
func TestResultBytesReadAsTheSDKsMarshal(t *testing.T) {
	h := &handler{impl: &mcp.Implementation{Name: "keel", Version: "1"}}
	results := map[string]func() *mcp.CallToolResult{
		"data and its text": func() *mcp.CallToolResult {
			return &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"id":"INC-1","n":1.50,"s":"<a&b>"}`),
				Content: []mcp.Content{&mcp.TextContent{Text: `{"id":"INC-1","n":1.50,"s":"<a&b>"} é ☃ "q" \ ` + "\u2028\x01"}}}
		},
		"no data": func() *mcp.CallToolResult { return &mcp.CallToolResult{StructuredContent: json.RawMessage(nil)} },
		"an error": func() *mcp.CallToolResult {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":false}`}}}
		},
		"empty content": func() *mcp.CallToolResult { return &mcp.CallToolResult{Content: []mcp.Content{}} },
		"untrusted": func() *mcp.CallToolResult {
			return &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"page":"x"}`), Content: []mcp.Content{&mcp.TextContent{Text: "x"}},
				Meta: mcp.Meta{UntrustedMetaKey: []string{"/page"}}}
		},
		"blocks": func() *mcp.CallToolResult {
			return &mcp.CallToolResult{StructuredContent: json.RawMessage(`{}`), Content: []mcp.Content{
				&mcp.TextContent{Text: "{}"},
				&mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a", MIMEType: "text/plain", Text: "a"}},
				&mcp.ResourceLink{URI: "https://example.com/r", Name: "r"},
				&mcp.TextContent{Text: "annotated", Annotations: &mcp.Annotations{Priority: 0.5}},
			}}
		},
	}
	for name, make := range results {
		for _, revision := range []bool{false, true} {
			got := h.resultAnswer([]byte(`7`), make(), revision)
			want := sdkAnswer(t, h, make(), revision)
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%s: not JSON: %s", name, got)
			}
			json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s (revision %v):\n got %s\nwant %s", name, revision, got, want)
			}
			if !strings.HasPrefix(string(got), `{"jsonrpc":"2.0","id":7,"result":{`) {
				t.Errorf("%s: %s", name, got)
			}
		}
	}
}

// sdkAnswer is the answer as keel wrote it through json.Marshal.
func sdkAnswer(t *testing.T, h *handler, res *mcp.CallToolResult, revision bool) []byte {
	if revision {
		m := res.GetMeta()
		if m == nil {
			m = map[string]any{}
		}
		m[mcp.MetaKeyServerInfo] = h.impl
		res.SetMeta(m)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var result map[string]any
	json.Unmarshal(b, &result)
	if revision {
		result["resultType"] = "complete"
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "result": result})
	return out
}

func BenchmarkResultAnswer(b *testing.B) {
	h := &handler{impl: &mcp.Implementation{Name: "keel", Version: "1"}}
	data := `{"id":"INC-001","title":"Checkout latency","severity":"high","service":"checkout","opened_at":"2026-01-02T03:04:05Z","tags":["p1","latency"]}`
	b.ReportAllocs()
	for range b.N {
		h.resultAnswer([]byte(`7`), &mcp.CallToolResult{StructuredContent: json.RawMessage(data), Content: []mcp.Content{&mcp.TextContent{Text: data}}}, true)
	}
}
