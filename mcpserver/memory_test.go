package mcpserver_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/redisreplay"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
	"github.com/keelgen/keel/runtime/keeltest"
)

// A Redis restarted empty forgets which request states were answered. A
// state made before is then refused (-32602, reason request_state_lost)
// on every replica, whatever its answer, and nothing runs: without that,
// an approval answered once ran its write a second time. A state made
// after the restart is answered as ever.
func TestAStoreThatLostItsMemoryRefusesEarlierStates(t *testing.T) {
	rdb := redistest.Start(t)
	store, err := redisreplay.New(rdb.Client(), redisreplay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ran := new(atomic.Int32)
	a, b := approvingReplica(t, store, ran, true), approvingReplica(t, store, ran, true)
	yes := `{"keel/approval":{"action":"accept","content":{"approve":true}}}`
	stateOf := func(reply string) string {
		var asked struct {
			Result struct {
				RequestState string `json:"requestState"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(reply), &asked) != nil || asked.Result.RequestState == "" {
			t.Fatalf("no question: %s", reply)
		}
		return asked.Result.RequestState
	}
	state := stateOf(callRaw(t, a.URL, ticketArgs, "", ""))
	if reply := callRaw(t, b.URL, ticketArgs, state, yes); ran.Load() != 1 {
		t.Fatalf("the first answer: the handler ran %d times: %s", ran.Load(), reply)
	}
	unanswered := stateOf(callRaw(t, a.URL, ticketArgs, "", ""))

	rdb.RestartEmpty()
	for _, c := range []struct{ name, state string }{{"answered before", state}, {"never answered", unanswered}} {
		for _, replica := range []string{a.URL, b.URL} {
			reply := callRaw(t, replica, ticketArgs, c.state, yes)
			if ran.Load() != 1 || !strings.Contains(reply, `"code":-32602`) || !strings.Contains(reply, `"reason":"request_state_lost"`) {
				t.Fatalf("%s, after the restart: the handler ran %d times: %s", c.name, ran.Load(), reply)
			}
		}
	}
	fresh := stateOf(callRaw(t, a.URL, ticketArgs, "", ""))
	if reply := callRaw(t, b.URL, ticketArgs, fresh, yes); ran.Load() != 2 {
		t.Fatalf("a state made after the restart: the handler ran %d times: %s", ran.Load(), reply)
	}
}

// The same for a handler's own question: its state, made before the
// restart, is refused after it.
func TestAStoreThatLostItsMemoryRefusesEarlierInputStates(t *testing.T) {
	rdb := redistest.Start(t)
	store, err := redisreplay.New(rdb.Client(), redisreplay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var done atomic.Int32
	exec, err := runtime.NewExecutor(keeltest.Of(bookTool(&done)), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithApprovals(grant.HMACKey(grantSecret), store))
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, mcpserver.New(exec, mcpserver.Options{StateSecret: stateSecret}), mcpserver.HTTPOptions{Stateless: true})
	call := func(extra string) string {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` +
			strings.Replace(meta2026("2026-07-28"), `clientCapabilities":{}`, `clientCapabilities":{"elicitation":{},"sampling":{},"roots":{}}`, 1) +
			`,"name":"book","arguments":{}` + extra + `}}`
		return post(t, srv.URL, body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "book"}).body
	}
	var asked struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if reply := call(""); json.Unmarshal([]byte(reply), &asked) != nil || asked.Result.RequestState == "" {
		t.Fatalf("no question: %s", reply)
	}
	answers := `,"requestState":` + quote(asked.Result.RequestState) + `,"inputResponses":{"seat":{"action":"accept","content":{"seat":"12A"}},` +
		`"note":{"role":"assistant","content":{"type":"text","text":"aisle"},"model":"m"},"roots":{"roots":[{"uri":"file:///trip"}]}}`
	rdb.RestartEmpty()
	if reply := call(answers); done.Load() != 0 || !strings.Contains(reply, `"reason":"request_state_lost"`) {
		t.Fatalf("after the restart: ran %d times: %s", done.Load(), reply)
	}
}

// Tasks on a Redis that restarted empty are not "unknown task" for ever:
// one made before reads failed with an unknown outcome (its call may have
// run), as a task whose replica died does; an id never made is still
// unknown (-32602), and a task made after the restart runs as ever.
func TestATaskLostWithItsStoreReadsFailed(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t)
	var probe taskProbe
	srv := redisTaskServer(t, rdb.Addr, &probe)
	done := taskRPC(t, srv.URL, "alice", "tools/call", `"name":"lookup_incident","arguments":{"incident_id":"INC-001"}`, true).str("taskId")
	awaitTask(t, srv.URL, "alice", done, "completed")

	rdb.RestartEmpty()
	lost := taskRPC(t, srv.URL, "alice", "tasks/get", `"taskId":"`+done+`"`, true)
	var rpcErr struct {
		Code int64
		Data struct {
			OutcomeUnknown bool `json:"outcome_unknown"`
		}
	}
	if lost.str("status") != "failed" || json.Unmarshal(lost.Result["error"], &rpcErr) != nil || rpcErr.Code != -32603 || !rpcErr.Data.OutcomeUnknown ||
		!strings.HasPrefix(lost.str("statusMessage"), "The outcome is unknown: the call may have run.") {
		t.Fatalf("a task the store lost: %+v", lost)
	}
	fresh := taskRPC(t, srv.URL, "alice", "tools/call", `"name":"lookup_incident","arguments":{"incident_id":"INC-001"}`, true).str("taskId")
	awaitTask(t, srv.URL, "alice", fresh, "completed")
	_, tag, _ := strings.Cut(fresh, ".")
	for _, never := range []string{"task-00112233445566778899aabbccddeeff", "task-00112233445566778899aabbccddeeff." + tag} {
		if r := taskRPC(t, srv.URL, "alice", "tasks/get", `"taskId":"`+never+`"`, true); r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("a task never made (%s): %+v", never, r)
		}
	}
}
