package mcpserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// Calls running at once are capped, one caller's and everyone's: past a
// cap a call is refused before it runs, 429 with Retry-After and -32029
// with a wait, and audited; another caller under both caps runs; a slot
// is free again once its call ends.
func TestCallsRunningAtOnceAreCapped(t *testing.T) {
	started, release := make(chan struct{}, 8), make(chan struct{})
	var audit auditLog
	wait := runtime.NewTool(runtime.ToolInfo{Name: "wait", Version: "1", Effect: runtime.EffectRead, Description: "Waits.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct{}) (map[string]string, error) {
			started <- struct{}{}
			<-release
			return map[string]string{}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(wait), runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithObserver(&audit))
	if err != nil {
		t.Fatal(err)
	}
	// In a test only: the caller named by a header, to have three of them.
	who := func(_ context.Context, req *mcp.CallToolRequest) runtime.ExecutionContext {
		return runtime.ExecutionContext{Principal: req.Extra.Header.Get("X-Test-Caller")}
	}
	srv := serve(t, mcpserver.New(exec, mcpserver.Options{Context: who, MaxCalls: 2, MaxCallsPerCaller: 1, Logger: slog.New(slog.DiscardHandler)}), mcpserver.HTTPOptions{Stateless: true})
	call := func(caller string) rawReply {
		return post(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}}`,
			map[string]string{"Mcp-Protocol-Version": "2025-06-18", "X-Test-Caller": caller})
	}
	var wg sync.WaitGroup
	replies := make([]rawReply, 2)
	for i, caller := range []string{"ann", "bob"} {
		wg.Add(1)
		go func() { defer wg.Done(); replies[i] = call(caller) }()
		<-started // each running, before the next is sent
	}
	busy := func(r rawReply) bool {
		return r.status == http.StatusTooManyRequests && r.header.Get("Retry-After") == "1" &&
			strings.Contains(r.body, `"code":-32029`) && strings.Contains(r.body, `"retry_after_seconds":1`)
	}
	if r := call("ann"); !busy(r) {
		t.Errorf("ann's second call at once: %d %v %s", r.status, r.header, r.body)
	}
	if r := call("cy"); !busy(r) {
		t.Errorf("a third caller past the server's cap: %d %v %s", r.status, r.header, r.body)
	}
	close(release)
	wg.Wait()
	for i, r := range replies {
		if r.status != http.StatusOK || strings.Contains(r.body, `"error"`) {
			t.Errorf("call %d: %d %s", i, r.status, r.body)
		}
	}
	if r := call("ann"); r.status != http.StatusOK || strings.Contains(r.body, `"error"`) {
		t.Errorf("ann's call once hers ended: %d %s", r.status, r.body)
	}
	if n := audit.refused("busy"); n != 2 {
		t.Errorf("%d refusals audited as busy, want 2", n)
	}
}

// auditLog counts what an observer is told.
type auditLog struct {
	mu      sync.Mutex
	reasons []string
}

func (a *auditLog) Begin(ctx context.Context, _ runtime.ToolCall) context.Context { return ctx }
func (a *auditLog) End(_ context.Context, r *runtime.CallRecord) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reasons = append(a.reasons, r.Refusal)
}

func (a *auditLog) refused(reason string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, r := range a.reasons {
		if r == reason {
			n++
		}
	}
	return n
}
