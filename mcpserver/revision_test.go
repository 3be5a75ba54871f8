package mcpserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
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

// An argument declared x-mcp-header (SEP-2243) is checked against its
// Mcp-Param header over 2026-07-28: a match runs, a header missing or
// different is 400 with -32020 and runs nothing; arguments the SDK cannot
// read still reach keel's answer.
func TestMirroredArgumentHeader(t *testing.T) {
	var ran atomic.Int32
	tool := runtime.NewTool(runtime.ToolInfo{Name: "route", Version: "1", Effect: runtime.EffectRead, Description: "Routes.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"number"}},"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct {
			Region string  `json:"region"`
			N      float64 `json:"n"`
		}) (struct{}, error) {
			ran.Add(1)
			return struct{}{}, nil
		}))
	call := routeCaller(t, tool)
	if r := call(`{"region":"eu-1"}`, map[string]string{"Mcp-Param-Region": "eu-1"}); r.status != 200 || strings.Contains(r.body, `"error"`) || ran.Load() != 1 {
		t.Fatalf("a matching header: %d %s", r.status, r.body)
	}
	for _, h := range []map[string]string{nil, {"Mcp-Param-Region": "us-1"}, {"Mcp-Param-Region": "=?base64?ZXUtMQ?="}} {
		if r := call(`{"region":"eu-1"}`, h); r.status != 400 || !strings.Contains(r.body, "-32020") {
			t.Errorf("header %v: %d %s", h, r.status, r.body)
		}
	}
	if r := call(`{"region":"eu-1","n":1e400}`, map[string]string{"Mcp-Param-Region": "eu-1"}); !strings.Contains(r.body, "invalid_arguments") {
		t.Errorf("arguments the SDK cannot read: %d %s", r.status, r.body)
	}
	if ran.Load() != 1 {
		t.Fatalf("the handler ran %d times", ran.Load())
	}
}

// A mirrored argument is checked against its header whatever else the
// arguments hold: with a number past a float64 in a member the tool takes
// as it is (an open value), the SDK cannot read the arguments, so its check
// of Mcp-Param-Region was skipped and a call with the header us-1, or with
// none, ran with region eu-1. keel now checks the headers itself against
// the bytes it runs.
func TestMirroredArgumentHeaderBesideAnUnreadableNumber(t *testing.T) {
	var ran atomic.Int32
	var region string
	tool := runtime.NewTool(runtime.ToolInfo{Name: "route", Version: "1", Effect: runtime.EffectRead, Description: "Routes.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"extra":{}},"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, in struct {
			Region string          `json:"region"`
			Extra  json.RawMessage `json:"extra"`
		}) (struct{}, error) {
			ran.Add(1)
			region = in.Region
			return struct{}{}, nil
		}))
	call := routeCaller(t, tool)
	args := `{"region":"eu-1","extra":[1e400]}`
	for _, h := range []map[string]string{nil, {"Mcp-Param-Region": "us-1"}, {"Mcp-Param-Region": "=?base64?dXMtMQ==?="}} {
		if r := call(args, h); r.status != 400 || !strings.Contains(r.body, "-32020") {
			t.Errorf("header %v: %d %s (region %q)", h, r.status, r.body, region)
		}
	}
	if ran.Load() != 0 {
		t.Fatalf("the handler ran %d times with a header that did not match", ran.Load())
	}
	for _, h := range []map[string]string{{"Mcp-Param-Region": "eu-1"}, {"Mcp-Param-Region": "=?base64?ZXUtMQ==?="}} {
		if r := call(args, h); r.status != 200 || strings.Contains(r.body, `"error"`) {
			t.Errorf("a matching header %v: %d %s", h, r.status, r.body)
		}
	}
	// A value with one end of the Base64 wrapper only is literal (the
	// conformance suite's ServerLiteralMissingBase64Suffix).
	if r := call(`{"region":"=?base64?ZXUtMQ==","extra":[1e400]}`, map[string]string{"Mcp-Param-Region": "=?base64?ZXUtMQ=="}); r.status != 200 || strings.Contains(r.body, `"error"`) {
		t.Errorf("a literal that starts like Base64: %d %s", r.status, r.body)
	}
	if r := call(`{"extra":[1e400]}`, map[string]string{"Mcp-Param-Region": "eu-1"}); r.status != 400 || !strings.Contains(r.body, "-32020") {
		t.Errorf("a header for an absent argument: %d %s", r.status, r.body)
	}
	if ran.Load() != 3 || region != "=?base64?ZXUtMQ==" {
		t.Fatalf("the handler ran %d times, last with region %q", ran.Load(), region)
	}
}

// routeCaller serves tool "route" statelessly and returns a function that
// calls it over 2026-07-28 with args and the headers given beside the
// standard ones.
func routeCaller(t *testing.T, tool *runtime.Tool) func(args string, headers map[string]string) rawReply {
	t.Helper()
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, mcpserver.New(exec, mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: true})
	return func(args string, headers map[string]string) rawReply {
		h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "route"}
		for k, v := range headers {
			h[k] = v
		}
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"route","arguments":` + args + `,` + meta2026("2026-07-28") + `}}`
		return post(t, srv.URL, body, h)
	}
}
