package keeltemporal_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"go.temporal.io/sdk/worker"

	keeltemporal "github.com/keelgen/keel/adapters/temporal"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/redisreplay"
	"github.com/keelgen/keel/redistasks"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

// An MCP task whose call runs on Temporal (mcpserver.Tasks.Runner): a
// write asked on one replica waits for the client's person, whose yes is
// answered on the other replica after the first is gone; the approved
// rollout runs on a worker process (the task's workflow and keel's
// activity) that is killed mid-call, and finishes on a second worker; the
// task then reads completed, with the one effect, on the replica that
// remains.
func TestTaskRunsOnTemporalAndOutlivesReplicaAndWorker(t *testing.T) {
	c := temporalClient(t)
	srv := redistest.Start(t)
	dir := ledger(t.TempDir())
	first := startWorkerProcess(t, srv.Addr, string(dir), "task-q", "first")

	replica := func() *httptest.Server {
		client := redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { client.Close() })
		store, err := redistasks.New(client, redistasks.Options{})
		if err != nil {
			t.Fatal(err)
		}
		replay, err := redisreplay.New(client, redisreplay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		exec, err := newExecutor(dir, nil, replay, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		approvals, err := mcpserver.NewApprovals(grant.HMACKey([]byte(grantSecret)), []byte("the replicas share this state secret: 32+ bytes"))
		if err != nil {
			t.Fatal(err)
		}
		s := mcpserver.New(exec, mcpserver.Options{
			Context: func(context.Context, *mcp.CallToolRequest) runtime.ExecutionContext {
				return runtime.ExecutionContext{Tenant: "acme", Principal: "alice"}
			},
			Approvals: approvals,
			Tasks: &mcpserver.Tasks{Store: store, Runner: &keeltemporal.TaskRunner{Client: c, Queue: "task-q", HeartbeatTimeout: 2 * time.Second},
				Logger: slog.New(slog.DiscardHandler)},
		})
		h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		return hs
	}
	a, b := replica(), replica()

	created := mcpRequest(t, a.URL, "tools/call", `"name":"rollout","arguments":{"service":"api","steps":40,"step_ms":250}`)
	id := created.str("taskId")
	if created.str("resultType") != "task" || id == "" {
		t.Fatalf("the rollout's call: %+v", created)
	}
	a.Close() // the replica that took the call is gone; the call is Temporal's
	waiting := awaitStatus(t, b.URL, id, "input_required")
	if !strings.Contains(string(waiting.Result["inputRequests"]), "rollout") {
		t.Fatalf("the question: %s", waiting.Result["inputRequests"])
	}
	mcpRequest(t, b.URL, "tasks/update", `"taskId":"`+id+`","inputResponses":{"keel/approval":{"action":"accept","content":{"approve":true}}}`)

	run := c.GetWorkflow(context.Background(), id+"-2", "")
	waitHeartbeat(t, c, run, func(h keeltemporal.Heartbeat) bool { return h.Progress != nil && h.Progress.Done >= 3 })
	if got := awaitStatus(t, b.URL, id, "working"); got.Result["result"] != nil {
		t.Fatalf("a working task with a result: %+v", got)
	}
	// The handler's progress, heartbeat by the worker, is the task's
	// statusMessage on the replica, as for a task the replica runs itself.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		msg := mcpRequest(t, b.URL, "tasks/get", `"taskId":"`+id+`"`).str("statusMessage")
		if strings.HasPrefix(msg, "step ") && strings.HasSuffix(msg, " of 40)") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the running task's statusMessage never told its progress: %q", msg)
		}
	}
	first.kill(t)
	second := startWorkerProcess(t, srv.Addr, string(dir), "task-q", "second")

	done := awaitStatus(t, b.URL, id, "completed")
	var result struct {
		StructuredContent struct{ Service, Key string }
		IsError           bool
	}
	if json.Unmarshal(done.Result["result"], &result) != nil || result.IsError || result.StructuredContent.Service != "api" {
		t.Fatalf("the task's result: %s\nsecond worker: %s", done.Result["result"], second.stderr())
	}
	if tries := dir.tries(); len(tries) != 2 || strings.Fields(tries[0])[0] == strings.Fields(tries[1])[0] {
		t.Errorf("tries (pid, attempt): %q; want two, in two processes", tries)
	}
	if effects := dir.effects(); len(effects) != 1 || !strings.HasSuffix(effects[0], "effect-"+result.StructuredContent.Key) {
		t.Errorf("effects %v, want the one of key %q", effects, result.StructuredContent.Key)
	}
}

// The runner reports its runs' progress to the MCP server.
var _ mcpserver.TaskProgressRunner = (*keeltemporal.TaskRunner)(nil)

// mcpReply is a JSON-RPC answer's result.
type mcpReply struct{ Result map[string]json.RawMessage }

func (r mcpReply) str(member string) string {
	var s string
	json.Unmarshal(r.Result[member], &s)
	return s
}

// mcpRequest sends one request of the 2026-07-28 revision from a client
// that declares the tasks extension and elicitation.
func mcpRequest(t *testing.T, url, method, params string) mcpReply {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}},` + params + `}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	var p struct{ Name, TaskID string }
	json.Unmarshal([]byte("{"+params+"}"), &p)
	req.Header.Set("Mcp-Name", p.Name+p.TaskID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Result map[string]json.RawMessage
		Error  json.RawMessage
	}
	if json.Unmarshal(raw, &out) != nil || out.Error != nil {
		t.Fatalf("%s: %d %s", method, resp.StatusCode, raw)
	}
	return mcpReply{out.Result}
}

// awaitStatus polls tasks/get until the task is want.
func awaitStatus(t *testing.T, url, id, want string) mcpReply {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		r := mcpRequest(t, url, "tasks/get", `"taskId":"`+id+`"`)
		if r.str("status") == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task never read %s: %v", want, r.Result)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A task on Temporal whose handler asks: each question makes the task
// input_required, the answer starts the call's next run (a workflow per
// round, as a run starts once) with every answer so far, and the handler,
// asked twice, completes with both; the client's kinds reach the worker.
func TestATaskOnTemporalAsksAndIsAnswered(t *testing.T) {
	c := temporalClient(t)
	exec, err := newExecutor(ledger(t.TempDir()), nil, memstore.NewReplayStore(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(c, "ask-q", worker.Options{})
	keeltemporal.RegisterTaskWorkflow(w)
	if err := keeltemporal.Register(w, exec, keeltemporal.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	s := mcpserver.New(exec, mcpserver.Options{StateSecret: []byte("0123456789abcdef0123456789abcdef"),
		Tasks: &mcpserver.Tasks{Runner: &keeltemporal.TaskRunner{Client: c, Queue: "ask-q"}, Logger: slog.New(slog.DiscardHandler)}})
	h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	id := mcpRequest(t, srv.URL, "tools/call", `"name":"pick_seat","arguments":{}`).str("taskId")
	if q := awaitStatus(t, srv.URL, id, "input_required"); !strings.Contains(string(q.Result["inputRequests"]), `"seat"`) {
		t.Fatalf("the first question: %s", q.Result["inputRequests"])
	}
	mcpRequest(t, srv.URL, "tasks/update", `"taskId":"`+id+`","inputResponses":{"seat":{"action":"accept","content":{"seat":"12A"}}}`)
	if q := awaitStatus(t, srv.URL, id, "input_required"); !strings.Contains(string(q.Result["inputRequests"]), "Seat 12A?") {
		t.Fatalf("the second question: %s", q.Result["inputRequests"])
	}
	mcpRequest(t, srv.URL, "tasks/update", `"taskId":"`+id+`","inputResponses":{"sure":{"action":"accept","content":{"ok":true}}}`)
	done := awaitStatus(t, srv.URL, id, "completed")
	if !strings.Contains(string(done.Result["result"]), "seat 12A, sure true") {
		t.Fatalf("the task's result: %s", done.Result["result"])
	}
	for _, run := range []string{id, id + "-2", id + "-3"} {
		if err := c.GetWorkflow(context.Background(), run, "").Get(context.Background(), nil); err != nil {
			t.Errorf("run %s: %v", run, err)
		}
	}
}
