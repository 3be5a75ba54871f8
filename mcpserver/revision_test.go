package mcpserver_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
)

// meta2026 is the per-request _meta of the 2026-07-28 revision (SEP-2575).
func meta2026(version string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{}}`
}

func post2026(t *testing.T, url, method, version, params string) rawReply {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + meta2026(version) + params + `}}`
	return post(t, url, body, map[string]string{"Mcp-Protocol-Version": version, "Mcp-Method": method})
}

// One endpoint serves both revisions: a server with sessions answers a
// request of 2026-07-28 (no session, its version in its _meta) as a
// stateless server does, and a 2025-11-25 client still gets a session.
func TestSessionsServerAnswersTheSessionlessRevision(t *testing.T) {
	exec, err := runtime.NewExecutor(generated.ToolSet(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for _, stateless := range []bool{false, true} {
		s := mcpserver.New(exec, mcpserver.Options{})
		srv := serve(t, s, mcpserver.HTTPOptions{Stateless: stateless})

		r := post2026(t, srv.URL, "tools/list", "2026-07-28", "")
		if r.status != http.StatusOK || !strings.Contains(r.body, `"lookup_incident"`) || r.header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("stateless=%v: tools/list of 2026-07-28: %d %v %q", stateless, r.status, r.header, r.body)
		}
		if !strings.Contains(r.body, `"cacheScope":"public"`) || !strings.Contains(r.body, `"ttlMs":`) {
			t.Errorf("stateless=%v: tools/list without caching hints (SEP-2549): %q", stateless, r.body)
		}

		// An unknown version: -32022 with the versions served and the one
		// asked for, the protocol's data; a hostile one is not echoed.
		r = post2026(t, srv.URL, "server/discover", "v999.0.0", "")
		var reply struct {
			Error struct {
				Code int64
				Data struct {
					Supported []string
					Requested string
				}
			}
		}
		if err := json.Unmarshal([]byte(r.body), &reply); err != nil || reply.Error.Code != -32022 ||
			len(reply.Error.Data.Supported) == 0 || reply.Error.Data.Requested != "v999.0.0" || r.status != http.StatusBadRequest {
			t.Errorf("stateless=%v: an unknown version: %d %q", stateless, r.status, r.body)
		}
		long := strings.Repeat("9", 200)
		if r := post2026(t, srv.URL, "server/discover", long, ""); strings.Contains(r.body, long) || !strings.Contains(r.body, `-32022`) {
			t.Errorf("stateless=%v: a 200-byte version echoed or not refused: %q", stateless, r.body)
		}

		// Features keel does not declare are -32601 (404), those it
		// declares empty answer empty.
		if r := post2026(t, srv.URL, "completion/complete", "2026-07-28", `,"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":"b"}`); r.status != http.StatusNotFound || !strings.Contains(r.body, `-32601`) {
			t.Errorf("stateless=%v: completion/complete: %d %q", stateless, r.status, r.body)
		}
		if r := post2026(t, srv.URL, "prompts/list", "2026-07-28", ""); !strings.Contains(r.body, `"prompts":[]`) {
			t.Errorf("stateless=%v: prompts/list: %d %q", stateless, r.status, r.body)
		}
		if r := post2026(t, srv.URL, "server/discover", "2026-07-28", ""); !strings.Contains(r.body, `"tools":{}`) || strings.Contains(r.body, `listChanged`) {
			t.Errorf("stateless=%v: discover declares a tool list that changes: %q", stateless, r.body)
		}

		// subscriptions/listen: its acknowledgement first, as an event.
		r = post2026(t, srv.URL, "subscriptions/listen", "2026-07-28", `,"notifications":{"toolsListChanged":true}`)
		ack := strings.Index(r.body, "notifications/subscriptions/acknowledged")
		if !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") || ack < 0 || ack > strings.Index(r.body, `"result"`) {
			t.Errorf("stateless=%v: subscriptions/listen: %v %q", stateless, r.header, r.body)
		}

		if !stateless {
			r := post(t, srv.URL, initialize, nil)
			if r.header.Get("Mcp-Session-Id") == "" {
				t.Errorf("a 2025 client got no session: %d %q", r.status, r.body)
			}
		}
	}
}
