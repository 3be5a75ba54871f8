package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// On a Stateless server, a notifications/cancelled sent in a POST of its
// own (as the TypeScript client sends it, keeping the call's POST open)
// ends the call it names when it comes from the same principal: the
// handler's context ends and the audit records tool_cancelled. Another
// principal's cancel with the same request id ends nothing.
func TestStatelessCancelFromAnotherPost(t *testing.T) {
	started := make(chan struct{}, 1)
	ended := make(chan struct{}, 1)
	tool := runtime.NewTool(runtime.ToolInfo{Name: "wait", Version: "1", Effect: runtime.EffectRead, Description: "Waits.", Timeout: 10 * time.Second,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (struct{}, error) {
			started <- struct{}{}
			<-ctx.Done()
			ended <- struct{}{}
			return struct{}{}, ctx.Err()
		}))
	var audit bytes.Buffer
	var mu sync.Mutex
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(lockedWriter{&mu, &audit}, nil)))))
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]string{"alice-token": "alice", "mallory-token": "mallory"}
	verifier := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: users[token], Expiration: time.Now().Add(time.Hour)}, nil
	}
	srv := serve(t, mcpserver.New(exec, mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: true, Verifier: verifier})
	post := func(token, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return nil
		}
		resp.Body.Close()
		return resp
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		post("alice-token", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	}()
	<-started
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user pressed stop"}}`
	post("mallory-token", cancel)
	select {
	case <-ended:
		t.Fatal("another principal's cancel ended alice's call")
	case <-time.After(200 * time.Millisecond):
	}
	post("alice-token", cancel)
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("alice's cancel did not end her call")
	}
	<-done
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		logged := audit.String()
		mu.Unlock()
		if strings.Contains(logged, `"code":"tool_cancelled"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit log has no tool_cancelled:\n%s", logged)
		}
	}
}
