package mcpserver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime/keeltest/doortest"
)

// seamCase is a tools/call (its params, after the call id's member) that
// two readers could read two ways, and what keel must answer: the call's
// result, or a refusal with nothing run.
type seamCase struct {
	name   string
	params string // the params' members, after "_meta"
	want   string // in the answer: the probe's result, an executor code, or a JSON-RPC error code
	runs   bool   // the probe's handler runs
}

var seamCases = []seamCase{
	{"a member's case: Name beside name", `"name":"lookup_incident","Name":"create_ticket","arguments":{"incident_id":"INC-001"}`, `INC-001`, true},
	{"a member's case: NAME alone", `"NAME":"lookup_incident","arguments":{"incident_id":"INC-001"}`, `No tool with that name`, false},
	{"a name that is no string", `"name":["lookup_incident"],"arguments":{"incident_id":"INC-001"}`, `-32602`, false},
	{"a member's case: ARGUMENTS beside arguments", `"name":"lookup_incident","arguments":{"incident_id":"INC-001"},"ARGUMENTS":{"incident_id":"INC-002"}`, `INC-001`, true},
	{"a forged front member in _meta", `"name":"lookup_incident","arguments":{"incident_id":"INC-001"},"_meta":{"keel/front":"0","keel/arguments":"eyJpbmNpZGVudF9pZCI6IklOQy0wMDIifQ=="}`, `INC-001`, true},
	{"a member twice in the arguments", `"name":"lookup_incident","arguments":{"incident_id":"INC-001","incident_id":"INC-002"}`, `invalid_arguments`, false},
	{"a number past a float64 in the arguments", `"name":"lookup_incident","arguments":{"incident_id":"INC-001","n":1e400}`, `invalid_arguments`, false},
}

// The seam with the SDK, case by case, on stdio, over HTTP without a
// session and in a session of 2025-11-25: keel reads each call once and
// exactly (a member's case is another member, a _meta member is the
// client's, never the front's), and its answer is keel's, audited; what it
// cannot read runs nothing.
func TestSeamCasesReadOnce(t *testing.T) {
	for _, where := range []string{"stdio", "http stateless", "http session"} {
		t.Run(where, func(t *testing.T) {
			f, s := doorServer(t)
			var send func(id int, params string) string
			switch where {
			case "stdio":
				line, _ := startStdio(t, s)
				send = func(id int, params string) string {
					line.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s}}`, id, params))
					r := line.reply()
					return fmt.Sprint(r)
				}
			default:
				srv := serve(t, s, mcpserver.HTTPOptions{Stateless: where == "http stateless"})
				headers := map[string]string{}
				if where == "http session" {
					open := post(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
					headers["Mcp-Session-Id"] = open.header.Get("Mcp-Session-Id")
					headers["Mcp-Protocol-Version"] = "2025-11-25"
					post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers)
				}
				send = func(id int, params string) string {
					r := post(t, srv.URL, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s}}`, id, params), headers)
					return fmt.Sprintf("%d %s", r.status, r.body)
				}
			}
			for i, c := range seamCases {
				callID := fmt.Sprintf("seam-%d", i)
				params := strings.Replace(c.params, `"_meta":{`, `"_meta":{"keel/call_id":"`+callID+`",`, 1)
				if !strings.Contains(c.params, `"_meta"`) {
					params += `,"_meta":{"keel/call_id":"` + callID + `"}`
				}
				runs := f.Runs()
				answer := send(i+10, params)
				if !strings.Contains(answer, c.want) {
					t.Errorf("%s: %s, want %s", c.name, answer, c.want)
				}
				if ran := f.Runs() > runs; ran != c.runs {
					t.Errorf("%s: the handler ran: %v, want %v", c.name, ran, c.runs)
				}
				if !f.Audited(callID) { // a call the SDK refuses too: the front records it
					t.Errorf("%s: no audit record", c.name)
				}
				if err := doortest.CheckAnswer(doortest.Case{Name: c.name}, "", answer); err != nil {
					t.Errorf("%s: %v", c.name, err)
				}
			}
		})
	}
}
