package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
	"github.com/keelgen/keel/runtime/report"
)

// sdkReads counts the tools/call requests the SDK decoded for s: a
// middleware added after New's sees every request the SDK dispatches.
func sdkReads(s *mcpserver.Server) *atomic.Int32 {
	var n atomic.Int32
	s.SDK().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				n.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return &n
}

// A sessionless tools/call (a Stateless server's, and every request of the
// 2026-07-28 revision) is answered by keel from the front's one reading:
// the SDK never decodes it. Its answer is the one the SDK's path gave: the
// result of the 2026-07-28 revision typed and naming the server, progress
// as events before it, an older revision's result untyped.
func TestSessionlessCallsAreKeelsAlone(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		s := exampleServer(t)
		reads := sdkReads(s)
		srv := serve(t, s, mcpserver.HTTPOptions{Stateless: stateless})

		headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "lookup_incident"}
		r := post(t, srv.URL, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{`+meta2026("2026-07-28")+`,"name":"lookup_incident","arguments":{"incident_id":"INC-001"}}}`, headers)
		if r.status != 200 || r.header.Get("Content-Type") != "application/json" ||
			!strings.Contains(r.body, `"result":{"resultType":"complete"`) || !strings.Contains(r.body, `"io.modelcontextprotocol/serverInfo":{"name":"keel"`) ||
			!strings.Contains(r.body, `"structuredContent":{"incident_id":"INC-001"`) {
			t.Errorf("stateless=%v, 2026-07-28: %d %s %s", stateless, r.status, r.header.Get("Content-Type"), r.body)
		}
		withProgress := `{"jsonrpc":"2.0","id":"p-1","method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"},"_meta":{"progressToken":"tok",` + strings.TrimPrefix(meta2026("2026-07-28"), `"_meta":{`) + `}}`
		r = post(t, srv.URL, withProgress, headers)
		if r.status != 200 || !strings.Contains(r.body, `"id":"p-1","result":{"resultType":"complete"`) {
			t.Errorf("stateless=%v, with a progress token: %d %s", stateless, r.status, r.body)
		}
		if stateless {
			r = post(t, srv.URL, lookupCall, nil)
			if r.status != 200 || strings.Contains(r.body, "resultType") || !strings.Contains(r.body, `"id":2,"result":{"content"`) {
				t.Errorf("an older revision, stateless: %d %s", r.status, r.body)
			}
		}
		if n := reads.Load(); n != 0 {
			t.Errorf("stateless=%v: the SDK decoded %d tools/call requests", stateless, n)
		}
	}
}

// A session's tools/call (a client of the 2025-11-25 revision) is keel's
// to answer too: the SDK keeps the session (its id, its initialize, the
// level its client set) and never decodes the call. A call that logs
// answers as events on its own POST, at the level the client set; a
// notifications/cancelled ends the call it names.
func TestSessionCallsAreKeelsAlone(t *testing.T) {
	started := make(chan struct{}, 1)
	tool := runtime.NewTool(runtime.ToolInfo{Name: "migrate", Version: "1", Effect: runtime.EffectRead, Description: "Migrates.", Timeout: 10 * time.Second,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"wait":{"type":"boolean"}},"additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, in struct {
			Wait bool `json:"wait"`
		}) (struct{}, error) {
			report.Log(ctx, report.LogDebug, "connecting")
			report.Log(ctx, report.LogWarning, "migrating")
			if in.Wait {
				started <- struct{}{}
				<-ctx.Done()
				return struct{}{}, ctx.Err()
			}
			return struct{}{}, nil
		}))
	s := mcpserver.New(quietExecutor(t, keeltest.Of(tool)), mcpserver.Options{})
	reads := sdkReads(s)
	srv := serve(t, s, mcpserver.HTTPOptions{})
	open := post(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	session := open.header.Get("Mcp-Session-Id")
	if open.status != 200 || session == "" {
		t.Fatalf("initialize: %d %s", open.status, open.body)
	}
	in := map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
	post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, in)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"migrate","arguments":{}}}`
	if r := post(t, srv.URL, call, in); r.status != 200 || r.header.Get("Content-Type") != "application/json" || !strings.Contains(r.body, `"id":2,"result":{"content"`) {
		t.Fatalf("a call before the client set a level: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	if r := post(t, srv.URL, `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}`, in); r.status != 200 {
		t.Fatalf("setLevel: %d %s", r.status, r.body)
	}
	r := post(t, srv.URL, strings.Replace(call, `"id":2`, `"id":4`, 1), in)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") ||
		!strings.Contains(r.body, `"level":"warning"`) || strings.Contains(r.body, "connecting") || !strings.Contains(r.body, `"id":4,"result"`) {
		t.Fatalf("a call that logs at the client's level: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	done := make(chan rawReply, 1)
	go func() {
		done <- post(t, srv.URL, `{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"migrate","arguments":{"wait":true}}}`, in)
	}()
	<-started
	post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w"}}`, in)
	if r := <-done; !strings.Contains(r.body, "tool_cancelled") {
		t.Fatalf("a cancelled call: %d %s", r.status, r.body)
	}
	if n := reads.Load(); n != 0 {
		t.Fatalf("the SDK decoded %d tools/call requests", n)
	}
}
