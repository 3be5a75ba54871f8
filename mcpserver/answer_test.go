package mcpserver_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver"
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
