package mcpserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/mcpserver/taskstore"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/redisreplay"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

var (
	grantSecret = []byte("0123456789abcdef0123456789abcdef-grants")
	stateSecret = []byte("0123456789abcdef0123456789abcdef-states")
)

const ticketArgs = `{"incident_id":"INC-042","summary":"page the on-call"}`

// approvingReplica is one server of a deployment whose replicas share a
// replay store: the example's tools, counting handler runs, approvals over
// MCP.
func approvingReplica(t *testing.T, store runtime.ReplayStore, ran *atomic.Int32, stateless bool) *httptest.Server {
	t.Helper()
	exec, err := runtime.NewExecutor(counted(t, ran), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithApprovals(grant.HMACKey(grantSecret), store))
	if err != nil {
		t.Fatal(err)
	}
	approvals, err := mcpserver.NewApprovals(grant.HMACKey(grantSecret), stateSecret)
	if err != nil {
		t.Fatal(err)
	}
	s := mcpserver.New(exec, mcpserver.Options{Approvals: approvals})
	reads := sdkReads(s)
	t.Cleanup(func() {
		if n := reads.Load(); n != 0 { // keel answers each call, and asks its question itself
			t.Errorf("the SDK decoded %d tools/call requests", n)
		}
	})
	return serve(t, s, mcpserver.HTTPOptions{Stateless: stateless})
}

// A person at the official Go client approves a write through the
// protocol's input request: over 2026-07-28 (MRTR, the client retries with
// the answer), and over a 2025-11-25 session (the SDK asks by elicitation
// on the session). A no, or a client that takes no elicitation, leaves the
// call approval_required, and nothing runs.
func TestApprovalThroughTheClient(t *testing.T) {
	for _, mode := range []struct {
		name      string
		stateless bool
		legacy    bool
	}{{"2026-07-28 stateless", true, false}, {"2026-07-28 sessions server", false, false}, {"2025-11-25 session", false, true}} {
		t.Run(mode.name, func(t *testing.T) {
			var ran atomic.Int32
			srv := approvingReplica(t, memstore.NewReplayStore(), &ran, mode.stateless)
			url := srv.URL
			if mode.legacy {
				legacy := httptest.NewServer(noDiscover(srv.Config.Handler))
				t.Cleanup(legacy.Close) // after the sessions close (cleanups run last first)
				url = legacy.URL
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			connect := func(answer func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcp.ClientSession {
				opts := &mcp.ClientOptions{}
				if answer != nil {
					opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return answer(req) }
				}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "approver", Version: "1"}, opts).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				return cs
			}
			call := func(cs *mcp.ClientSession) *mcp.CallToolResult {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_ticket", Arguments: json.RawMessage(ticketArgs)})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}

			var asked []string
			res := call(connect(func(req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked = append(asked, req.Params.Message)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			}))
			if len(asked) != 1 || !strings.Contains(asked[0], "create_ticket") || !strings.Contains(asked[0], `"INC-042"`) {
				t.Fatalf("the person was asked %q", asked)
			}
			if ran.Load() != 1 || strings.Contains(textOf(res), "approval_required") {
				t.Fatalf("approved: the handler ran %d times; %s", ran.Load(), textOf(res))
			}

			res = call(connect(func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, nil
			}))
			if ran.Load() != 1 || !strings.Contains(textOf(res), `"approval_required"`) {
				t.Fatalf("declined: the handler ran %d times; %s", ran.Load(), textOf(res))
			}
			res = call(connect(nil))
			if ran.Load() != 1 || !strings.Contains(textOf(res), `"approval_required"`) {
				t.Fatalf("no elicitation: the handler ran %d times; %s", ran.Load(), textOf(res))
			}
		})
	}
}

// The request state is signed and bound to the call: a tampered state, or
// one made for other arguments, runs nothing; a state answered once is
// spent on every replica (two servers on one Redis).
func TestApprovalStateIsSignedAndSingleUse(t *testing.T) {
	a, b, ran := twoReplicas(t)

	first := callRaw(t, a.URL, ticketArgs, "", "")
	var asked struct {
		Result struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(first), &asked); err != nil || asked.Result.ResultType != "input_required" ||
		asked.Result.RequestState == "" || asked.Result.InputRequests["keel/approval"] == nil {
		t.Fatalf("a write the policy sends for approval: %s", first)
	}
	state := asked.Result.RequestState
	yes := `{"keel/approval":{"action":"accept","content":{"approve":true}}}`

	for name, c := range map[string]struct{ args, state string }{
		"tampered state":  {ticketArgs, state + "x"},
		"forged state":    {ticketArgs, "e30." + strings.Split(state, ".")[1]},
		"other arguments": {`{"incident_id":"INC-043","summary":"page the on-call"}`, state},
	} {
		reply := callRaw(t, b.URL, c.args, c.state, yes)
		if ran.Load() != 0 {
			t.Fatalf("%s: the handler ran: %s", name, reply)
		}
		if name != "other arguments" && !strings.Contains(reply, `"code":-32602`) {
			t.Errorf("%s: %s, want -32602", name, reply)
		}
		if name == "other arguments" && !strings.Contains(reply, `approval_required`) {
			t.Errorf("%s: %s, want approval_required", name, reply)
		}
	}

	if reply := callRaw(t, b.URL, ticketArgs, state, yes); ran.Load() != 1 {
		t.Fatalf("answered on the other replica: the handler ran %d times: %s", ran.Load(), reply)
	}
	for _, replica := range []*httptest.Server{a, b} {
		if reply := callRaw(t, replica.URL, ticketArgs, state, yes); ran.Load() != 1 || !answeredBefore(reply) {
			t.Fatalf("the state replayed: the handler ran %d times: %s", ran.Load(), reply)
		}
	}
}

// twoReplicas are two stateless approving replicas whose grants and
// answers share one Redis, and the count of their handlers' runs.
func twoReplicas(t *testing.T) (a, b *httptest.Server, ran *atomic.Int32) {
	t.Helper()
	rdb := redistest.Start(t)
	store, err := redisreplay.New(rdb.Client(), redisreplay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ran = new(atomic.Int32)
	return approvingReplica(t, store, ran, true), approvingReplica(t, store, ran, true), ran
}

// callRaw posts one tools/call of create_ticket in the 2026-07-28 form, as
// a client that takes elicitation, with a request state and answers when
// given.
func callRaw(t *testing.T, url, args, state, answers string) string {
	t.Helper()
	params := `{` + strings.Replace(meta2026("2026-07-28"), `clientCapabilities":{}`, `clientCapabilities":{"elicitation":{}}`, 1) +
		`,"name":"create_ticket","arguments":` + args
	if state != "" {
		params += `,"requestState":` + quote(state) + `,"inputResponses":` + answers
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}}`
	r := post(t, url, body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "create_ticket"})
	if r.status != http.StatusOK && r.status != http.StatusBadRequest {
		t.Fatalf("%d %s", r.status, r.body)
	}
	return r.body
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// hostileTicket is a write whose summary, read as bytes, hides what it
// does: 1,990 newlines and a line separator push a sentence out of sight,
// and bidi controls reorder what is left.
var hostileTicket = `{"summary":"Nothing is changed.` + strings.Repeat(`\n`, 1990) + `\u2028 then page everyone \u202e!yltneuqerf\u202c","incident_id":"INC-042"}`

// The person reads one rendering of the call, the executor's, whatever
// the door: over 2026-07-28, in a 2025-11-25 session and in a task's
// input request, the elicitation's message is the executor's
// ApprovalRequest.Brief, here its whole Question, nothing in it being too
// long for a client (the page's and a URL-mode elicitation's are
// compared in TestURLModeClientsAreSentToThePage and browsertest), every member is
// shown, and no bidi or separator character reaches the person as it is.
func TestTheQuestionIsTheExecutorsRendering(t *testing.T) {
	exec, err := runtime.NewExecutor(counted(t, new(atomic.Int32)), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithApprovals(grant.HMACKey(grantSecret), memstore.NewReplayStore()))
	if err != nil {
		t.Fatal(err)
	}
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "q", Name: "create_ticket", Arguments: json.RawMessage(hostileTicket)})
	if r.Error == nil || r.Error.Approval == nil {
		t.Fatalf("not sent for approval: %+v", r)
	}
	want := r.Error.Approval.Question
	for _, shown := range []string{`incident_id: "INC-042"`, "summary: text of 1991 lines (", "| Nothing is changed.\n    (1989 empty lines)\n    | \\u2028 then page everyone \\u202E!yltneuqerf\\u202C"} {
		if !strings.Contains(want, shown) {
			t.Errorf("the question lacks %q:\n%s", shown, want)
		}
	}
	if strings.ContainsAny(want, "\u2028\u202e\u202c") || strings.Contains(want, "\n\n\n") {
		t.Errorf("the question renders what it should escape:\n%s", want)
	}
	for _, mode := range []struct {
		name      string
		stateless bool
		legacy    bool
	}{{"2026-07-28 stateless", true, false}, {"2025-11-25 session", false, true}} {
		t.Run(mode.name, func(t *testing.T) {
			var ran atomic.Int32
			srv := approvingReplica(t, memstore.NewReplayStore(), &ran, mode.stateless)
			url := srv.URL
			if mode.legacy {
				legacy := httptest.NewServer(noDiscover(srv.Config.Handler))
				t.Cleanup(legacy.Close)
				url = legacy.URL
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var asked []string
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "approver", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = append(asked, req.Params.Message)
					return &mcp.ElicitResult{Action: "decline"}, nil
				}}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_ticket", Arguments: json.RawMessage(hostileTicket)}); err != nil {
				t.Fatal(err)
			}
			if len(asked) != 1 || asked[0] != want {
				t.Fatalf("the person read %q, want the executor's %q", asked, want)
			}
		})
	}
	t.Run("a task's input request", func(t *testing.T) {
		srv := httptest.NewServer(taskReplica(t, new(taskProbe), memstore.NewReplayStore(), taskstore.NewMemory(), true))
		t.Cleanup(srv.Close)
		id := taskRPC(t, srv.URL, "alice", "tools/call", `"name":"create_ticket","arguments":`+hostileTicket, true).str("taskId")
		var asked map[string]struct{ Params struct{ Message string } }
		waiting := awaitTask(t, srv.URL, "alice", id, "input_required")
		if json.Unmarshal(waiting.Result["inputRequests"], &asked) != nil || asked["keel/approval"].Params.Message != want {
			t.Fatalf("the task asks %s, want the executor's %q", waiting.Result["inputRequests"], want)
		}
	})
}

// Every answer spends its question's state, a no as a yes: a state
// answered no (or declined, or cancelled) and sent again with a yes, on
// the same replica or another, runs nothing (it ran before this test
// existed), and neither does a second yes. A second answer is refused
// with -32602 whose data says the state was answered (it read
// approval_required before), on every replica.
func TestEveryAnswerSpendsTheState(t *testing.T) {
	a, b, ran := twoReplicas(t)
	stateOf := func() string {
		var asked struct {
			Result struct {
				RequestState string `json:"requestState"`
			} `json:"result"`
		}
		reply := callRaw(t, a.URL, ticketArgs, "", "")
		if json.Unmarshal([]byte(reply), &asked) != nil || asked.Result.RequestState == "" {
			t.Fatalf("no question: %s", reply)
		}
		return asked.Result.RequestState
	}
	yes := `{"keel/approval":{"action":"accept","content":{"approve":true}}}`
	for _, first := range []string{
		`{"keel/approval":{"action":"accept","content":{"approve":false}}}`,
		`{"keel/approval":{"action":"decline"}}`,
		`{"keel/approval":{"action":"cancel"}}`,
	} {
		state := stateOf()
		if reply := callRaw(t, a.URL, ticketArgs, state, first); ran.Load() != 0 || !strings.Contains(reply, "approval_required") {
			t.Fatalf("answered %s: the handler ran %d times: %s", first, ran.Load(), reply)
		}
		for _, replica := range []*httptest.Server{a, b} {
			if reply := callRaw(t, replica.URL, ticketArgs, state, yes); ran.Load() != 0 || !answeredBefore(reply) {
				t.Fatalf("answered %s, then yes: the handler ran %d times: %s", first, ran.Load(), reply)
			}
		}
	}
	state := stateOf()
	callRaw(t, b.URL, ticketArgs, state, yes)
	if reply := callRaw(t, a.URL, ticketArgs, state, yes); ran.Load() != 1 || !answeredBefore(reply) {
		t.Fatalf("a second yes: the handler ran %d times: %s", ran.Load(), reply)
	}
}

// answeredBefore reports whether reply is the refusal of a request state
// answered before: -32602, its fixed text, and the reason in its data.
func answeredBefore(reply string) bool {
	var r struct {
		Error *struct {
			Code    int64
			Message string
			Data    json.RawMessage
		}
		Result json.RawMessage
	}
	return json.Unmarshal([]byte(reply), &r) == nil && r.Error != nil && r.Result == nil && r.Error.Code == -32602 &&
		r.Error.Message == "Invalid params." && string(r.Error.Data) == `{"reason":"request_state_answered"}`
}
