// Package contenttest is one checked result with every kind of content
// block, for the adapters' tests: each writes it in its provider's shape
// and reads it back through the provider's own Go types.
package contenttest

import (
	"encoding/json"

	"github.com/keelgen/keel/runtime"
)

// PNG and PDF are the bytes of the sample's image and document.
var (
	PNG = []byte("\x89PNG\r\n\x1a\nkeel-pixels")
	PDF = []byte("%PDF-1.7 keel")
)

// Result is a successful result of a chart tool: its data, then an image,
// audio, a PDF and a CSV embedded, and links to a PDF and a page.
func Result() runtime.ToolResult {
	v := "1.0"
	return runtime.ToolResult{CallID: "call_7", ToolName: "chart", ToolVersion: &v, OK: true,
		Data: json.RawMessage(`{"title":"latency"}`),
		Content: []runtime.Content{
			runtime.Image("image/png", PNG),
			runtime.Audio("audio/wav", []byte("RIFF-keel-WAVE")),
			runtime.BlobResource("s3://reports/q3.pdf", "application/pdf", PDF),
			runtime.TextResource("file:///reports/q3.csv", "text/csv", "service,p99\napi,120\n"),
			runtime.ResourceLink("https://example.com/q3.pdf", "Q3 report", "application/pdf"),
			runtime.ResourceLink("https://example.com/dash", "Dashboard", "text/html"),
		}}
}
