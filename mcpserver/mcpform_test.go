package mcpserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
	"github.com/keelgen/keel/runtime/wire"
)

// The official Go client lists and calls a tool holding a Nullable (a
// type list with null), a union (a type list) and an x-mcp-header member,
// at 2026-07-28 over HTTP: it reads keel's MCP form of the schema, so it
// mirrors the member into its Mcp-Param header and the call runs. With the
// type lists as keel writes them, the client read no annotation, sent no
// header, and keel refused every call of the tool (-32020).
func TestTheGoClientReadsNullableAndUnionMembers(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	schema := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},` +
		`"note":{"type":["string","null"],"maxLength":20},"limit":{"type":["string","integer"]}},"required":["region"],"additionalProperties":false}`
	tool := runtime.NewTool(runtime.ToolInfo{Name: "route", Version: "1", Effect: runtime.EffectRead, Description: "Routes.",
		InputSchema: json.RawMessage(schema), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, a struct {
			Region string                `json:"region"`
			Note   wire.Nullable[string] `json:"note,omitzero"`
			Limit  json.RawMessage       `json:"limit,omitempty"`
		}) (map[string]string, error) {
			ran.Add(1)
			return map[string]string{"region": a.Region}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpserver.HTTPHandler(mcpserver.New(exec, mcpserver.Options{Logger: slog.New(slog.DiscardHandler)}),
		mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listed, err := cs.ListTools(ctx, nil)
	if err != nil || len(listed.Tools) != 1 {
		t.Fatalf("%v %+v", err, listed)
	}
	in, _ := json.Marshal(listed.Tools[0].InputSchema)
	if strings.Contains(string(in), `"type":[`) || !strings.Contains(string(in), `"anyOf":[{"type":"string"},{"type":"null"}]`) {
		t.Fatalf("the listed input schema: %s", in)
	}
	for _, args := range []map[string]any{
		{"region": "eu-1", "note": nil, "limit": 5},
		{"region": "eu-1", "note": "fragile", "limit": "all"},
		{"region": "eu-1"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "route", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%v: %v %+v", args, err, res)
		}
	}
	if ran.Load() != 3 {
		t.Fatalf("the handler ran %d times, want 3", ran.Load())
	}
	// The form accepts what keel's schema accepts, no more: a note too
	// long or a limit of another type is refused by keel's checks.
	for _, args := range []map[string]any{{"region": "eu-1", "note": strings.Repeat("x", 21)}, {"region": "eu-1", "limit": true}} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "route", Arguments: args})
		if err == nil && !res.IsError {
			t.Errorf("%v ran", args)
		}
	}
	if ran.Load() != 3 {
		t.Fatalf("the handler ran %d times, want 3", ran.Load())
	}
}
