package mcpserver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
)

// refusedFrame is a message the front refuses before any call is read
// from it, and the refusal its audit record names.
type refusedFrame struct {
	name   string
	frame  string
	reason string
}

var refusedFrames = []refusedFrame{
	{"not one JSON value", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lookup_incident"`, runtime.RefusedNotJSON},
	{"a batch of one call", `[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"}}}]`, runtime.RefusedBatch},
	{"a value that is no message", `"tools/call"`, runtime.RefusedNotAMessage},
	{"a name twice", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"lookup_incident","name":"create_ticket","arguments":{"incident_id":"INC-001"},"_meta":{"keel/call_id":"refused-dup"}}}`, runtime.RefusedDuplicate},
	{"an id twice", `{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"}}}`, runtime.RefusedDuplicate},
}

// Every message the front refuses has its audit record, on stdio and over
// HTTP with sessions and without: refused_message, why, the caller as
// Options.Context names it, and the client's call id where the front read
// one; nothing runs.
func TestFrontRefusalsAreAudited(t *testing.T) {
	for _, where := range []string{"stdio", "http stateless", "http session"} {
		t.Run(where, func(t *testing.T) {
			f, s := doorServer(t)
			var send func(frame string) string
			var headers map[string]string
			var url string
			switch where {
			case "stdio":
				line, _ := startStdio(t, s)
				send = func(frame string) string { line.send(frame); return fmt.Sprint(line.reply()) }
			default:
				srv := serve(t, s, mcpserver.HTTPOptions{Stateless: where == "http stateless", MaxBodyBytes: 4096})
				url, headers = srv.URL, map[string]string{}
				if where == "http session" {
					open := post(t, srv.URL, initialize, nil)
					headers["Mcp-Session-Id"] = open.header.Get("Mcp-Session-Id")
					headers["Mcp-Protocol-Version"] = "2025-06-18"
					post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers)
				}
				send = func(frame string) string {
					r := post(t, srv.URL, frame, headers)
					return fmt.Sprintf("%d %s", r.status, r.body)
				}
			}
			cases := refusedFrames
			if where != "stdio" {
				cases = append(cases, refusedFrame{"a body over MaxBodyBytes", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"` + strings.Repeat("x", 5000) + `"}}}`, runtime.RefusedTooLarge})
			}
			for _, c := range cases {
				before, records, runs := f.Refused(c.reason), f.Records(), f.Runs()
				answer := send(c.frame)
				if !strings.Contains(answer, "-32600") && !strings.Contains(answer, "-32700") && !strings.HasPrefix(answer, "4") {
					t.Errorf("%s: answered %.200s", c.name, answer)
				}
				if got := f.Refused(c.reason) - before; got != 1 || f.Records()-records != 1 {
					t.Errorf("%s: %d records of %s, %d in all; want one", c.name, got, c.reason, f.Records()-records)
				}
				if f.Runs() != runs {
					t.Errorf("%s: a handler ran", c.name)
				}
			}
			if !f.Audited("refused-dup") {
				t.Error("a refused call's record does not carry the client's call id")
			}
			if where == "stdio" {
				return
			}
			// A call the SDK refuses after the front read it (here, a name
			// sent under another Mcp-Name) is recorded once, by the front.
			before, records := f.Refused(runtime.RefusedHeaderMismatch)+f.Refused(runtime.RefusedProtocol), f.Records()
			body := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"keel/call_id":"refused-header"}}}`
			r := post(t, url, body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "create_ticket"})
			if r.status != 400 || !f.Audited("refused-header") || f.Refused(runtime.RefusedHeaderMismatch)+f.Refused(runtime.RefusedProtocol)-before != 1 || f.Records()-records != 1 {
				t.Errorf("a call under another Mcp-Name: %d %s, audited %v, %d records", r.status, r.body, f.Audited("refused-header"), f.Records()-records)
			}
		})
	}
}

// On a transport whose frames the SDK decodes (here the in-memory one),
// the front reads each request's params: a call whose params name a member
// twice, and one the SDK refuses (a call before initialize), each have
// their audit record.
func TestDecodedTransportRefusalsAreAudited(t *testing.T) {
	f, s := doorServer(t)
	st, ct := mcp.NewInMemoryTransports()
	ctx := t.Context()
	if _, err := s.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exchange := func(raw string) string {
		t.Helper()
		msg, err := jsonrpc.DecodeMessage([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(ctx, msg); err != nil {
			t.Fatal(err)
		}
		reply, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := jsonrpc.EncodeMessage(reply)
		return string(b)
	}
	early := exchange(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"},"_meta":{"keel/call_id":"before-initialize"}}}`)
	if !strings.Contains(early, `"error"`) || !f.Audited("before-initialize") || f.Refused(runtime.RefusedProtocol) != 1 {
		t.Errorf("a call before initialize: %s, audited %v", early, f.Audited("before-initialize"))
	}
	exchange(initialize)
	if err := conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized"}); err != nil {
		t.Fatal(err)
	}
	runs := f.Runs()
	dup := exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"},"arguments":{"incident_id":"INC-002"},"_meta":{"keel/call_id":"decoded-dup"}}}`)
	if !strings.Contains(dup, `-32602`) || !f.Audited("decoded-dup") || f.Refused(runtime.RefusedDuplicate) != 1 || f.Runs() != runs {
		t.Errorf("a call whose params name a member twice: %s, audited %v", dup, f.Audited("decoded-dup"))
	}
	if ok := exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"}}}`); !strings.Contains(ok, "INC-001") || f.Runs() != runs+1 {
		t.Errorf("a valid call after the refusals: %s", ok)
	}
}
