package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/redisrate"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
)

// A call over its caller's rate limit is the JSON-RPC error -32029, with
// the wait in its data; over HTTP the answer is 429 with Retry-After, its
// body that same error (the Go SDK's client reports the status); nothing
// else of the limiter reaches the client.
func TestRateLimitedCallsAre429(t *testing.T) {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithRateLimits(runtime.RateLimits{Limiter: memstore.NewRateLimiter(), PerCaller: runtime.RateLimit{Calls: 1, Per: time.Hour}}))
	if err != nil {
		t.Fatal(err)
	}
	// Each client is its own caller, by name.
	s := mcpserver.New(exec, mcpserver.Options{Context: func(_ context.Context, req *mcp.CallToolRequest) runtime.ExecutionContext {
		return runtime.ExecutionContext{Principal: req.ClientInfo().Name}
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

// Two HTTP replicas behind one limit: each its own executor and its own
// client of one real Redis (redisrate). One caller's clients, one on each
// replica, make 12 calls in turn under a limit of 5 a minute: 5 run, on
// whichever replica, and the other 7 are 429; another caller is not held.
func TestReplicasShareARateLimit(t *testing.T) {
	srv := redistest.Start(t)
	verifier := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}
	replica := func() string {
		lim, err := redisrate.New(srv.Client(), redisrate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)),
			runtime.WithRateLimits(runtime.RateLimits{Limiter: lim, PerCaller: runtime.RateLimit{Calls: 5, Per: time.Minute}}))
		if err != nil {
			t.Fatal(err)
		}
		s := mcpserver.New(exec, mcpserver.Options{Context: mcpserver.TokenContext(func(_ context.Context, tok *auth.TokenInfo) runtime.ExecutionContext {
			return runtime.ExecutionContext{Principal: tok.UserID}
		})})
		return serve(t, s, mcpserver.HTTPOptions{Stateless: true, Verifier: verifier}).URL
	}
	urls := []string{replica(), replica()}
	connect := func(url, token string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	clients := []*mcp.ClientSession{connect(urls[0], "ann"), connect(urls[1], "ann")}
	args := map[string]any{"incident_id": "INC-001"}
	ran, limited := 0, 0
	for i := range 12 {
		_, err := clients[i%2].CallTool(context.Background(), &mcp.CallToolParams{Name: generated.ToolLookupIncident, Arguments: args})
		switch {
		case err == nil:
			ran++
		case strings.Contains(err.Error(), "Too Many Requests"):
			limited++
		default:
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if ran != 5 || limited != 7 {
		t.Errorf("%d ran and %d were limited across the replicas; want 5 and 7", ran, limited)
	}
	r := post(t, urls[1], lookupCall, map[string]string{"Authorization": "Bearer ann", "Mcp-Protocol-Version": "2025-06-18"})
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Errorf("the 13th call: %d %v", r.status, r.header)
	}
	if _, err := connect(urls[1], "bob").CallTool(context.Background(), &mcp.CallToolParams{Name: generated.ToolLookupIncident, Arguments: args}); err != nil {
		t.Errorf("bob is held by ann's limit: %v", err)
	}
}

// A limiter that cannot reach its store (redis-server paused, then killed)
// refuses the call, and says so apart from a limit reached: 429 with
// Retry-After, and -32029 whose words and data say the limit could not be
// checked; nothing runs. A real limit keeps its own words.
func TestALimitThatCannotBeCheckedSaysSo(t *testing.T) {
	rdb := redistest.Start(t)
	lim, err := redisrate.New(rdb.Client(), redisrate.Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var ran atomic.Int32
	exec, err := runtime.NewExecutor(counted(t, &ran), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithRateLimits(runtime.RateLimits{Limiter: lim, PerCaller: runtime.RateLimit{Calls: 100, Per: time.Minute}}))
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, mcpserver.New(exec, mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: true})
	headers := map[string]string{"Mcp-Protocol-Version": "2025-06-18"}
	if r := post(t, srv.URL, lookupCall, headers); r.status != http.StatusOK || ran.Load() != 1 {
		t.Fatalf("with Redis up: %d %s", r.status, r.body)
	}
	for _, fault := range []string{"paused", "down"} {
		if fault == "paused" {
			rdb.Pause()
		} else {
			rdb.Resume()
			rdb.Kill()
		}
		r := post(t, srv.URL, lookupCall, headers)
		var body struct {
			Error jsonrpc.Error `json:"error"`
		}
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "1" || json.Unmarshal([]byte(r.body), &body) != nil ||
			body.Error.Code != mcpserver.CodeRateLimited || body.Error.Message != "The rate limit could not be checked." ||
			string(body.Error.Data) != `{"retry_after_seconds":1,"limit_unchecked":true}` {
			t.Errorf("Redis %s: %d %v %s", fault, r.status, r.header, r.body)
		}
	}
	if ran.Load() != 1 {
		t.Errorf("the handler ran %d times, want once", ran.Load())
	}
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "x", Name: "lookup_incident", Arguments: json.RawMessage(`{"incident_id":"INC-001"}`)})
	if e := r.Error; e == nil || !e.LimitUnchecked || e.RetryAfterSeconds != 1 || e.Message != "The rate limit could not be checked; try again in 1 s." {
		t.Errorf("the executor's result: %+v", e)
	}
}
