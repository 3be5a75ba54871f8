package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
)

// A call over its caller's rate limit is the JSON-RPC error -32029, with
// the wait in its data; over HTTP the answer is 429 with Retry-After, its
// body that same error (the Go SDK's client reports the status); nothing
// else of the limiter reaches the client.
func TestRateLimitedCallsAre429(t *testing.T) {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithRateLimits(runtime.RateLimits{Limiter: runtime.NewMemoryRateLimiter(), PerCaller: runtime.RateLimit{Calls: 1, Per: time.Hour}}))
	if err != nil {
		t.Fatal(err)
	}
	// Each client is its own caller, by name.
	s := mcpserver.New(exec, mcpserver.Options{Context: func(_ context.Context, req *mcp.CallToolRequest) runtime.ExecutionContext {
		return runtime.ExecutionContext{Principal: req.Session.InitializeParams().ClientInfo.Name}
	}})
	args := map[string]any{"incident_id": "INC-001"}
	for _, transport := range []string{"in-memory (stdio framing)", "streamable HTTP"} {
		cs := transports(t, s, "client over "+transport)[transport] // a caller of its own
		if r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: generated.ToolLookupIncident, Arguments: args}); err != nil || r.IsError {
			t.Fatalf("%s: the first call: %v %+v", transport, err, r)
		}
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: generated.ToolLookupIncident, Arguments: args})
		var wire *jsonrpc.Error
		switch {
		case transport == "streamable HTTP": // the Go SDK's client reads the 429 alone, as a transport error
			if err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
				t.Errorf("%s: the second call: %v", transport, err)
			}
		case !errors.As(err, &wire) || wire.Code != mcpserver.CodeRateLimited || wire.Message != "Too many calls." || string(wire.Data) != `{"retry_after_seconds":3600}`:
			t.Errorf("%s: the second call: %v", transport, err)
		}
	}

	// Raw HTTP, stateless: the status and the header a client backs off by.
	stateless := mcpserver.New(exec, mcpserver.Options{Context: func(context.Context, *mcp.CallToolRequest) runtime.ExecutionContext {
		return runtime.ExecutionContext{Principal: "one-http-caller"}
	}})
	srv := serve(t, stateless, mcpserver.HTTPOptions{Stateless: true})
	headers := map[string]string{"Mcp-Protocol-Version": "2025-06-18"}
	if r := post(t, srv.URL, lookupCall, headers); r.status != http.StatusOK {
		t.Fatalf("the first call: %d %s", r.status, r.body)
	}
	r := post(t, srv.URL, lookupCall, headers)
	var body struct {
		Error struct {
			Code int             `json:"code"`
			Data json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "3600" || json.Unmarshal([]byte(r.body), &body) != nil ||
		body.Error.Code != mcpserver.CodeRateLimited || strings.Contains(r.body, "bucket") {
		t.Errorf("over the limit: %d %v %s", r.status, r.header, r.body)
	}
}
