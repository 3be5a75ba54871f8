package runtime_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// A hand-bound tool's formats are the generated reader's: held to their
// RFCs (internal/formats), not to the validator's looser reading.
func TestAHandBoundToolChecksFormatsByTheirRFCs(t *testing.T) {
	fetch := runtime.NewTool(runtime.ToolInfo{Name: "fetch", Version: "1", Effect: runtime.EffectRead, Description: "Fetches a page.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["url"],"properties":{"url":{"type":"string","format":"uri"},"host":{"type":"string","format":"hostname"},"every":{"type":"string","format":"duration"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct {
			URL   string `json:"url"`
			Host  string `json:"host"`
			Every string `json:"every"`
		}) (struct{}, error) {
			return struct{}{}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(fetch), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for args, ok := range map[string]bool{
		`{"url":"https://example.org/a%20b","host":"xn--bcher-kva.example","every":"P1Y2M"}`: true,
		`{"url":"https://example.org/a b"}`:                                                  false, // RFC 3986 §2
		`{"url":"https://example.org/","host":"example."}`:                                   false, // RFC 1123 §2.1
		`{"url":"https://example.org/","host":"xn--X"}`:                                      false, // RFC 3492
		`{"url":"https://example.org/","every":"PT1H2S"}`:                                    false, // RFC 3339 Appendix A
	} {
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "c", Name: "fetch", Arguments: json.RawMessage(args)})
		if r.OK != ok || (!ok && r.Code() != runtime.CodeInvalidArguments) {
			t.Errorf("%s: %+v", args, r)
		}
	}
}
