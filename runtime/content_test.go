package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

type chart struct {
	Title string `json:"title"`
}

// contentTool is a hand-bound tool that returns blocks, declaring types.
func contentTool(t *testing.T, declared []string, blocks []runtime.Content, opts ...runtime.Option) (*runtime.Executor, *bytes.Buffer) {
	t.Helper()
	tool := runtime.NewTool(runtime.ToolInfo{
		Name: "chart", Version: "1", Effect: runtime.EffectRead, Description: "Draws a chart.", Content: declared,
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}`),
	}, runtime.Handle(func(context.Context, struct{}) (runtime.WithContent[chart], error) {
		return runtime.WithContent[chart]{Data: chart{Title: "latency"}, Content: blocks}, nil
	}))
	var log bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&log, nil))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), append([]runtime.Option{runtime.WithLogger(logger), runtime.WithObserver(runtime.AuditLog(logger))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return exec, &log
}

// A result's content blocks come back in order beside its data, checked;
// the audit records their kinds, types and sizes, never their bytes.
func TestContentBlocksPassChecked(t *testing.T) {
	png := []byte("\x89PNG-secret-pixels")
	blocks := []runtime.Content{
		runtime.Image("image/png", png),
		runtime.TextResource("file:///reports/q3.csv", "text/csv", "a,b\n1,2\n"),
		runtime.BlobResource("s3://bucket/q3.pdf", "application/pdf", []byte("%PDF-1.7")),
		runtime.ResourceLink("https://example.com/q3", "Q3 report", "text/html"),
		runtime.Audio("audio/wav", []byte("RIFF....WAVE")),
	}
	exec, log := contentTool(t, []string{"application/pdf", "audio/wav", "image/*", "text/*"}, blocks)
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "c", Name: "chart"})
	if !r.OK || string(r.Data) != `{"title":"latency"}` || len(r.Content) != len(blocks) || r.Content[3].Name != "Q3 report" {
		t.Fatalf("result %+v", r)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"content":[{"type":"image","mime_type":"image/png","data":"iVBORy1zZWNyZXQtcGl4ZWxz"}`) {
		t.Errorf("JSON %s", b)
	}
	if strings.Contains(log.String(), "secret") || strings.Contains(log.String(), "iVBOR") ||
		!strings.Contains(log.String(), `"content":[{"bytes":18,"mime_type":"image/png","type":"image"}`) {
		t.Errorf("audit log:\n%s", log)
	}
	// No content: the result's JSON is what it always was.
	plain := runtime.ToolResult{CallID: "c", ToolName: "t", OK: true, Data: json.RawMessage(`{}`)}
	if b, _ := json.Marshal(plain); string(b) != `{"call_id":"c","tool_name":"t","tool_version":null,"ok":true,"data":{},"error":null}` {
		t.Errorf("a result without content: %s", b)
	}
}

// Every block that breaks the declared types, its kind's shape or the
// limits makes the result invalid_tool_output, data and all.
func TestContentBlocksThatBreakTheContract(t *testing.T) {
	img := []byte{1, 2, 3}
	cases := map[string]struct {
		declared []string
		blocks   []runtime.Content
		opts     []runtime.Option
	}{
		"undeclared type":        {[]string{"image/png"}, []runtime.Content{runtime.Image("image/jpeg", img)}, nil},
		"none declared":          {nil, []runtime.Content{runtime.Image("image/png", img)}, nil},
		"image of audio type":    {[]string{"audio/*"}, []runtime.Content{runtime.Image("audio/wav", img)}, nil},
		"empty image":            {[]string{"image/png"}, []runtime.Content{runtime.Image("image/png", nil)}, nil},
		"MIME with parameters":   {[]string{"text/*"}, []runtime.Content{runtime.TextResource("file:///a", "text/plain; charset=utf-8", "x")}, nil},
		"wildcard MIME returned": {[]string{"image/*"}, []runtime.Content{runtime.Image("image/*", img)}, nil},
		"relative URI":           {[]string{"text/plain"}, []runtime.Content{runtime.TextResource("reports/a.txt", "text/plain", "x")}, nil},
		"resource text and data": {[]string{"text/plain"}, []runtime.Content{{Kind: runtime.ContentResource, URI: "file:///a", MIMEType: "text/plain", Text: "x", Data: img}}, nil},
		"resource neither":       {[]string{"text/plain"}, []runtime.Content{runtime.TextResource("file:///a", "text/plain", "")}, nil},
		"invalid UTF-8 text":     {[]string{"text/plain"}, []runtime.Content{runtime.TextResource("file:///a", "text/plain", "\xff")}, nil},
		"link without name":      {[]string{"text/html"}, []runtime.Content{runtime.ResourceLink("https://example.com", "", "text/html")}, nil},
		"unknown kind":           {[]string{"image/png"}, []runtime.Content{{Kind: "video", MIMEType: "image/png", Data: img}}, nil},
		"too many blocks": {[]string{"image/png"}, []runtime.Content{runtime.Image("image/png", img), runtime.Image("image/png", img), runtime.Image("image/png", img)},
			[]runtime.Option{runtime.WithLimits(runtime.Limits{MaxContentBlocks: 2})}},
		"MIME with CR LF":          {[]string{"image/*"}, []runtime.Content{runtime.Image("image/png\r\nX-Injected: 1", img)}, nil},
		"MIME with NUL":            {[]string{"image/*"}, []runtime.Content{runtime.Image("image/p\x00ng", img)}, nil},
		"MIME not UTF-8":           {[]string{"image/*"}, []runtime.Content{runtime.Image("image/\xffpng", img)}, nil},
		"MIME not ASCII":           {[]string{"image/*"}, []runtime.Content{runtime.Image("image/pñg", img)}, nil},
		"MIME name over 127":       {[]string{"image/*"}, []runtime.Content{runtime.Image("image/"+strings.Repeat("p", 128), img)}, nil},
		"MIME starting with a dot": {[]string{"image/*"}, []runtime.Content{runtime.Image("image/.png", img)}, nil},
		"MIME counted in the bytes": {[]string{"image/*"}, []runtime.Content{runtime.Image("image/"+strings.Repeat("p", 120), img), runtime.Image("image/"+strings.Repeat("q", 120), img)},
			[]runtime.Option{runtime.WithLimits(runtime.Limits{MaxContentBytes: 200})}},
		"too many bytes": {[]string{"image/png"}, []runtime.Content{runtime.Image("image/png", make([]byte, 600)), runtime.Image("image/png", make([]byte, 600))},
			[]runtime.Option{runtime.WithLimits(runtime.Limits{MaxContentBytes: 1000})}},
	}
	for name, c := range cases {
		exec, log := contentTool(t, c.declared, c.blocks, c.opts...)
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "c", Name: "chart"})
		if r.Code() != runtime.CodeInvalidToolOutput || r.Data != nil || r.Content != nil {
			t.Errorf("%s: %+v", name, r)
		}
		if !strings.Contains(log.String(), "content block") && !strings.Contains(log.String(), "content blocks") {
			t.Errorf("%s: the protected log does not say which block:\n%s", name, log)
		}
	}
}
