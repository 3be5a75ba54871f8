package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/mcpserver/taskclient"
	"github.com/keelgen/keel/mcpserver/taskstore"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/redisreplay"
	"github.com/keelgen/keel/redistasks"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
	"github.com/keelgen/keel/runtime/keeltest"
	"github.com/keelgen/keel/runtime/report"
)

// taskProbe counts what the task tools' handlers did. lookup_incident of
// INC-999 works until its call is cancelled; any other id answers at once.
// Its timeout is a minute, not the generated 2 s: a test cancels it, or
// outwaits a lease beside it, and a loaded machine must not end it first.
type taskProbe struct {
	started, cancelled, ticketed, released atomic.Int32
	release                                chan struct{} // lookup_incident of INC-777 ends when it is closed
}

func (p *taskProbe) tools() runtime.ToolSet {
	var tools []*runtime.Tool
	for _, tool := range generated.ToolSet().Tools() {
		info := tool.Info()
		switch info.Name {
		case generated.ToolLookupIncident:
			info.Timeout = time.Minute
			tools = append(tools, runtime.NewTool(info, runtime.Handle(func(ctx context.Context, in struct {
				IncidentID string `json:"incident_id"`
			}) (map[string]any, error) {
				p.started.Add(1)
				if in.IncidentID == "INC-777" {
					<-p.release
					p.released.Add(1)
				}
				if in.IncidentID == "INC-999" {
					<-ctx.Done()
					p.cancelled.Add(1)
					return nil, ctx.Err()
				}
				return map[string]any{"incident_id": in.IncidentID, "service": "db", "severity": "low", "symptom": "slow", "evidence": []string{}}, nil
			})))
		case generated.ToolCreateTicket:
			tools = append(tools, runtime.NewTool(info, runtime.Handle(func(_ context.Context, in struct {
				IncidentID string `json:"incident_id"`
				Summary    string `json:"summary"`
			}) (map[string]any, error) {
				p.ticketed.Add(1)
				return map[string]any{"ticket_id": "TCK-0001", "incident_id": in.IncidentID, "status": "open"}, nil
			})))
		}
	}
	return keeltest.Of(tools...)
}

// callerHeader names the caller in these tests: a stand-in for the
// verified token a deployment's ContextFunc reads (TokenContext).
const callerHeader = "X-Test-Caller"

func byHeader(_ context.Context, req *mcp.CallToolRequest) runtime.ExecutionContext {
	if req.Extra == nil || req.Extra.Header == nil {
		return runtime.ExecutionContext{}
	}
	return runtime.ExecutionContext{Tenant: "acme", Principal: req.Extra.Header.Get(callerHeader)}
}

// taskLease is a test replica's task lease: long beside its renewal every
// 50 ms, so that a replica a loaded machine stalls keeps its tasks (600 ms
// was tight on CI's 2 cores under the race detector, 1.2 s with the suite
// run twice at once), and short beside lookup_incident's timeout here (a
// minute), which a test outwaits a lease within.
const taskLease = 2 * time.Second

// taskReplica is one server of a deployment whose replicas share a task
// store and a replay store: every tool a task tool, writes approved by the
// client's person.
func taskReplica(t testing.TB, probe *taskProbe, tasks runtime.ReplayStore, store taskstore.Store, stateless bool) http.Handler {
	t.Helper()
	h, err := mcpserver.HTTPHandler(taskServer(t, probe, tasks, store), mcpserver.HTTPOptions{Stateless: stateless, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// taskServer is taskReplica's server.
func taskServer(t testing.TB, probe *taskProbe, tasks runtime.ReplayStore, store taskstore.Store) *mcpserver.Server {
	t.Helper()
	exec, err := runtime.NewExecutor(probe.tools(), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithApprovals(grant.HMACKey(grantSecret), tasks))
	if err != nil {
		t.Fatal(err)
	}
	approvals, err := mcpserver.NewApprovals(grant.HMACKey(grantSecret), stateSecret)
	if err != nil {
		t.Fatal(err)
	}
	return mcpserver.New(exec, mcpserver.Options{Context: byHeader, Approvals: approvals, Tasks: &mcpserver.Tasks{
		Store: store, PollInterval: 50 * time.Millisecond, Lease: taskLease, Logger: slog.New(slog.DiscardHandler),
		Mode: func(info runtime.ToolInfo) mcpserver.TaskMode {
			if info.Effect == runtime.EffectWrite {
				return mcpserver.TaskRequired
			}
			return mcpserver.TaskOptional
		},
	}})
}

// rpcReply is a JSON-RPC answer as a test reads it.
type rpcReply struct {
	status int
	Result map[string]json.RawMessage
	Error  *struct {
		Code    int64
		Message string
		Data    json.RawMessage
	}
}

func (r rpcReply) str(member string) string {
	var s string
	json.Unmarshal(r.Result[member], &s)
	return s
}

// taskRPC sends one request of the 2026-07-28 revision as caller, its
// client declaring the tasks extension and elicitation or neither, with
// the headers the revision asks for.
func taskRPC(t testing.TB, url, caller, method, params string, declares bool) rpcReply {
	t.Helper()
	caps := `{}`
	if declares {
		caps = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `},` + params + `}}`
	headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, callerHeader: caller}
	var p struct {
		Name   string `json:"name"`
		TaskID string `json:"taskId"`
	}
	json.Unmarshal([]byte(`{`+params+`}`), &p)
	if p.Name != "" {
		headers["Mcp-Name"] = p.Name
	} else if p.TaskID != "" {
		headers["Mcp-Name"] = p.TaskID
	}
	raw := post(t.(*testing.T), url, body, headers)
	reply := rpcReply{status: raw.status}
	text := raw.body
	if i := strings.Index(text, "data: "); strings.HasPrefix(raw.header.Get("Content-Type"), "text/event-stream") && i >= 0 {
		text = strings.TrimSpace(strings.SplitN(text[i+len("data: "):], "\n", 2)[0])
	}
	if err := json.Unmarshal([]byte(text), &reply); err != nil {
		t.Fatalf("%s: not JSON-RPC: %d %q", method, raw.status, raw.body)
	}
	return reply
}

// waitFor waits until ok, or fails saying what it waited for.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

// awaitTask polls tasks/get until the task's status is want.
func awaitTask(t *testing.T, url, caller, id, want string) rpcReply {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := taskRPC(t, url, caller, "tasks/get", `"taskId":"`+id+`"`, true)
		if r.Error == nil && r.str("status") == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s never reached %s: %+v %s", id, want, r.Error, r.Result["status"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A client that declares the tasks extension gets a task for a task tool,
// whose call runs through the executor and whose result tasks/get inlines;
// one that does not gets the result at once, or -32021 for a tool that
// must be a task. A task is its caller's alone; the removed methods are
// -32601; a task request's Mcp-Name is its taskId.
func TestTasksOverHTTP(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			t.Parallel()
			var probe taskProbe
			srv := httptest.NewServer(taskReplica(t, &probe, memstore.NewReplayStore(), taskstore.NewMemory(), stateless))
			t.Cleanup(srv.Close)
			lookup := `"name":"lookup_incident","arguments":{"incident_id":"INC-001"}`

			r := taskRPC(t, srv.URL, "alice", "tools/call", lookup, true)
			id := r.str("taskId")
			if r.Error != nil || r.str("resultType") != "task" || id == "" || r.Result["result"] != nil || r.Result["ttlMs"] == nil {
				t.Fatalf("a task tool's call: %+v %v", r.Error, r.Result)
			}
			done := awaitTask(t, srv.URL, "alice", id, "completed")
			var result struct {
				StructuredContent map[string]any
				IsError           bool
			}
			if json.Unmarshal(done.Result["result"], &result) != nil || result.IsError || result.StructuredContent["service"] != "db" || done.str("resultType") != "complete" {
				t.Fatalf("the completed task: %s", done.Result["result"])
			}
			if r := taskRPC(t, srv.URL, "mallory", "tasks/get", `"taskId":"`+id+`"`, true); r.Error == nil || r.Error.Code != -32602 {
				t.Fatalf("another caller read the task: %+v", r)
			}
			if r := taskRPC(t, srv.URL, "mallory", "tasks/cancel", `"taskId":"`+id+`"`, true); r.Error == nil || r.Error.Code != -32602 {
				t.Fatalf("another caller cancelled the task: %+v", r)
			}

			r = taskRPC(t, srv.URL, "alice", "tools/call", lookup, false)
			if r.Error != nil || r.str("resultType") != "complete" || r.Result["structuredContent"] == nil {
				t.Fatalf("without the extension, an optional task tool: %+v %v", r.Error, r.Result)
			}
			r = taskRPC(t, srv.URL, "alice", "tools/call", `"name":"create_ticket","arguments":`+ticketArgs, false)
			if r.Error == nil || r.Error.Code != -32021 || !strings.Contains(string(r.Error.Data), mcpserver.TasksExtension) || probe.ticketed.Load() != 0 {
				t.Fatalf("without the extension, a required task tool: %+v", r.Error)
			}
			if r := taskRPC(t, srv.URL, "alice", "tasks/get", `"taskId":"`+id+`"`, false); r.Error == nil || r.Error.Code != -32021 {
				t.Fatalf("tasks/get without the extension: %+v", r)
			}
			for _, m := range []string{"tasks/result", "tasks/list"} {
				if r := taskRPC(t, srv.URL, "alice", m, `"taskId":"`+id+`"`, true); r.Error == nil || r.Error.Code != -32601 {
					t.Fatalf("%s: %+v", m, r)
				}
			}
			if r := taskRPC(t, srv.URL, "alice", "tasks/get", `"taskId":"task-unknown"`, true); r.Error == nil || r.Error.Code != -32602 {
				t.Fatalf("an unknown task: %+v", r)
			}
			body := `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}},"taskId":"` + id + `"}}`
			raw := post(t, srv.URL, body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tasks/get", "Mcp-Name": "task-other", callerHeader: "alice"})
			if raw.status != http.StatusBadRequest || !strings.Contains(raw.body, "-32020") || !strings.Contains(raw.body, `"id":3`) {
				t.Fatalf("a tasks/get whose Mcp-Name is another task: %d %q", raw.status, raw.body)
			}
			// A member "taskId" but for case, with the header naming it, is
			// refused too: encoding/json read "TASKID" where the method
			// serves "taskId".
			for _, params := range []string{`"taskId":"` + id + `","TASKID":"task-other"`, `"TASKID":"task-other","taskId":"` + id + `"`, `"TaskId":"task-other"`} {
				body := `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}},` + params + `}}`
				raw := post(t, srv.URL, body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tasks/get", "Mcp-Name": "task-other", callerHeader: "alice"})
				if raw.status != http.StatusBadRequest || !strings.Contains(raw.body, "-32020") || strings.Contains(raw.body, id) {
					t.Fatalf("%s under Mcp-Name task-other: %d %q", params, raw.status, raw.body)
				}
			}
		})
	}
}

// A write in a task waits for the client's person: the task is
// input_required with keel's approval question; tasks/update with a yes
// runs the call once, and a second answer is ignored. A cancel ends a
// running task's call, and the task reads cancelled.
func TestTaskApprovalAndCancel(t *testing.T) {
	t.Parallel()
	var probe taskProbe
	srv := httptest.NewServer(taskReplica(t, &probe, memstore.NewReplayStore(), taskstore.NewMemory(), true))
	t.Cleanup(srv.Close)

	r := taskRPC(t, srv.URL, "alice", "tools/call", `"name":"create_ticket","arguments":`+ticketArgs, true)
	id := r.str("taskId")
	waiting := awaitTask(t, srv.URL, "alice", id, "input_required")
	var asked map[string]struct {
		Method string
		Params struct{ Message string }
	}
	if json.Unmarshal(waiting.Result["inputRequests"], &asked) != nil || asked["keel/approval"].Method != "elicitation/create" ||
		!strings.Contains(asked["keel/approval"].Params.Message, "create_ticket") || waiting.Result["requestState"] != nil ||
		!strings.Contains(asked["keel/approval"].Params.Message, "\n  incident_id: \"INC-042\"\n  summary: \"page the on-call\"") {
		t.Fatalf("the waiting task: %s", waiting.Result["inputRequests"])
	}
	if probe.ticketed.Load() != 0 {
		t.Fatal("the write ran before a person approved it")
	}
	yes := `"taskId":"` + id + `","inputResponses":{"keel/approval":{"action":"accept","content":{"approve":true}}}`
	if r := taskRPC(t, srv.URL, "alice", "tasks/update", yes, true); r.Error != nil || r.str("resultType") != "complete" || r.Result["status"] != nil {
		t.Fatalf("tasks/update: %+v %v", r.Error, r.Result)
	}
	done := awaitTask(t, srv.URL, "alice", id, "completed")
	if probe.ticketed.Load() != 1 || !strings.Contains(string(done.Result["result"]), "TCK-0001") {
		t.Fatalf("approved: ran %d times; %s", probe.ticketed.Load(), done.Result["result"])
	}
	if r := taskRPC(t, srv.URL, "alice", "tasks/update", yes, true); r.Error != nil {
		t.Fatalf("a second answer: %+v", r.Error)
	}
	time.Sleep(100 * time.Millisecond)
	if probe.ticketed.Load() != 1 {
		t.Fatalf("a second answer ran the write again (%d runs)", probe.ticketed.Load())
	}

	r = taskRPC(t, srv.URL, "alice", "tools/call", `"name":"lookup_incident","arguments":{"incident_id":"INC-999"}`, true)
	slow := r.str("taskId")
	awaitTask(t, srv.URL, "alice", slow, "working")
	waitFor(t, "the slow handler to start", func() bool { return probe.started.Load() == 1 }) // a call cancelled before it starts runs nothing
	if r := taskRPC(t, srv.URL, "alice", "tasks/cancel", `"taskId":"`+slow+`"`, true); r.Error != nil || r.str("resultType") != "complete" {
		t.Fatalf("tasks/cancel: %+v", r.Error)
	}
	awaitTask(t, srv.URL, "alice", slow, "cancelled")
	waitFor(t, "the cancelled task's handler to end", func() bool { return probe.cancelled.Load() == 1 })
}

// redisTaskReplicas are two stateless task replicas whose tasks and grants
// share one Redis, each counting its handlers' runs in its probe.
func redisTaskReplicas(t *testing.T, pa, pb *taskProbe) (a, b *httptest.Server) {
	t.Helper()
	rdb := redistest.Start(t)
	replica := func(probe *taskProbe) *httptest.Server {
		client := redis.NewClient(&redis.Options{Addr: rdb.Addr})
		t.Cleanup(func() { client.Close() })
		store, err := redistasks.New(client, redistasks.Options{})
		if err != nil {
			t.Fatal(err)
		}
		replay, err := redisreplay.New(client, redisreplay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(taskReplica(t, probe, replay, store, true))
		t.Cleanup(srv.Close)
		return srv
	}
	return replica(pa), replica(pb)
}

// redisTaskServer is a stateless replica whose tasks live on the Redis at
// addr, its grants spent in this process.
func redisTaskServer(t *testing.T, addr string, probe *taskProbe) *httptest.Server {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { client.Close() })
	store, err := redistasks.New(client, redistasks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(taskReplica(t, probe, memstore.NewReplayStore(), store, true))
	t.Cleanup(srv.Close)
	return srv
}

// Two replicas on one Redis: a task made on one is answered by the other;
// a cancel sent to the other ends the call where it runs; an approval
// answered on the other runs the write there, once.
func TestTasksAcrossReplicas(t *testing.T) {
	t.Parallel()
	var pa, pb taskProbe
	a, b := redisTaskReplicas(t, &pa, &pb)

	slow := taskRPC(t, a.URL, "alice", "tools/call", `"name":"lookup_incident","arguments":{"incident_id":"INC-999"}`, true).str("taskId")
	awaitTask(t, b.URL, "alice", slow, "working")
	waitFor(t, "the slow handler to start", func() bool { return pa.started.Load() == 1 })
	if r := taskRPC(t, b.URL, "alice", "tasks/cancel", `"taskId":"`+slow+`"`, true); r.Error != nil {
		t.Fatalf("tasks/cancel on the other replica: %+v", r.Error)
	}
	waitFor(t, "a cancel sent to the other replica to end the handler", func() bool { return pa.cancelled.Load() == 1 })
	awaitTask(t, a.URL, "alice", slow, "cancelled")

	write := taskRPC(t, a.URL, "alice", "tools/call", `"name":"create_ticket","arguments":`+ticketArgs, true).str("taskId")
	awaitTask(t, b.URL, "alice", write, "input_required")
	yes := `"taskId":"` + write + `","inputResponses":{"keel/approval":{"action":"accept","content":{"approve":true}}}`
	taskRPC(t, b.URL, "alice", "tasks/update", yes, true)
	taskRPC(t, a.URL, "alice", "tasks/update", yes, true)
	awaitTask(t, a.URL, "alice", write, "completed")
	if pa.ticketed.Load()+pb.ticketed.Load() != 1 {
		t.Fatalf("one approval ran the write %d times on a and %d on b", pa.ticketed.Load(), pb.ticketed.Load())
	}
}

// A task whose replica is killed (SIGKILL: no goodbye) reads failed on the
// other once its lease is over, with the protocol's error; a task that
// ended before the kill keeps its result.
func TestATaskSurvivesAKilledReplica(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestTaskReplicaProcess$")
	cmd.Env = append(os.Environ(), "KEEL_TASK_REPLICA_REDIS="+rdb.Addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	url := ""
	for lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), "replica "); ok {
			url = u
			break
		}
	}
	if url == "" {
		t.Fatal("the replica process did not start")
	}
	var probe taskProbe
	other := redisTaskServer(t, rdb.Addr, &probe)

	ended := taskRPC(t, url, "alice", "tools/call", `"name":"lookup_incident","arguments":{"incident_id":"INC-001"}`, true).str("taskId")
	awaitTask(t, other.URL, "alice", ended, "completed")
	running := taskRPC(t, url, "alice", "tools/call", `"name":"lookup_incident","arguments":{"incident_id":"INC-999"}`, true).str("taskId")
	awaitTask(t, other.URL, "alice", running, "working")
	time.Sleep(taskLease + 300*time.Millisecond) // longer than a lease, shorter than the call's timeout: the live replica renews it
	awaitTask(t, other.URL, "alice", running, "working")

	cmd.Process.Kill()
	cmd.Wait()
	failed := awaitTask(t, other.URL, "alice", running, "failed")
	var rpcErr struct {
		Code int64
		Data struct {
			OutcomeUnknown bool `json:"outcome_unknown"`
		}
	}
	if json.Unmarshal(failed.Result["error"], &rpcErr) != nil || rpcErr.Code != -32603 || !rpcErr.Data.OutcomeUnknown || failed.Result["result"] != nil ||
		!strings.HasPrefix(failed.str("statusMessage"), "The outcome is unknown: the call may have run.") {
		t.Fatalf("the killed replica's task: %s %q", failed.Result["error"], failed.str("statusMessage"))
	}
	if r := awaitTask(t, other.URL, "alice", ended, "completed"); !strings.Contains(string(r.Result["result"]), `"db"`) {
		t.Fatalf("the task that ended before the kill: %s", r.Result["result"])
	}
}

// A task whose end cannot be stored, Redis paused as its handler returns,
// completes once Redis answers again: its end is tried again with
// backoff, and the task never reads failed for a call that ran.
func TestATaskEndOutlivesAStorePause(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: rdb.Addr, MaxRetries: -1, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { client.Close() })
	store, err := redistasks.New(client, redistasks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	probe := taskProbe{release: make(chan struct{})}
	srv := httptest.NewServer(taskReplica(t, &probe, memstore.NewReplayStore(), store, true))
	t.Cleanup(srv.Close)
	id := taskRPC(t, srv.URL, "alice", "tools/call", `"name":"lookup_incident","arguments":{"incident_id":"INC-777"}`, true).str("taskId")
	awaitTask(t, srv.URL, "alice", id, "working")
	rdb.Pause()
	close(probe.release)
	waitFor(t, "the handler to end", func() bool { return probe.released.Load() == 1 })
	time.Sleep(time.Second) // the end's first tries meet the paused Redis (each gives up after 200 ms); less than a lease
	rdb.Resume()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r := taskRPC(t, srv.URL, "alice", "tasks/get", `"taskId":"`+id+`"`, true)
		if r.Error == nil && r.str("status") == "failed" {
			t.Fatalf("a task whose call ran read failed: %s", r.Result["error"])
		}
		if r.Error == nil && r.str("status") == "completed" {
			if !strings.Contains(string(r.Result["result"]), `"db"`) {
				t.Fatalf("the result: %s", r.Result["result"])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task never completed: %+v %s", r.Error, r.Result["status"])
		}
	}
}

// TestTaskReplicaProcess is the replica TestATaskSurvivesAKilledReplica
// kills: this test binary, run again, serving until it is killed.
func TestTaskReplicaProcess(t *testing.T) {
	addr := os.Getenv("KEEL_TASK_REPLICA_REDIS")
	if addr == "" {
		t.Skip("run by TestATaskSurvivesAKilledReplica")
	}
	client := redis.NewClient(&redis.Options{Addr: addr})
	store, err := redistasks.New(client, redistasks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var probe taskProbe
	srv := httptest.NewServer(taskReplica(t, &probe, memstore.NewReplayStore(), store, true))
	fmt.Println("replica", srv.URL)
	select {}
}

// Over stdio a task is the same: the client declares the extension in its
// request's _meta, gets the task, and reads its result with tasks/get.
func TestTasksOverStdio(t *testing.T) {
	var probe taskProbe
	exec, err := runtime.NewExecutor(probe.tools(), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := startStdio(t, mcpserver.New(exec, mcpserver.Options{Tasks: &mcpserver.Tasks{Logger: slog.New(slog.DiscardHandler)}}))
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"},` + meta + `}}`)
	created, _ := c.reply()["result"].(map[string]any)
	id, _ := created["taskId"].(string)
	if created["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call over stdio: %v", created)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c.send(`{"jsonrpc":"2.0","id":6,"method":"tasks/get","params":{"taskId":"` + id + `",` + meta + `}}`)
		got, _ := c.reply()["result"].(map[string]any)
		if got["status"] == "completed" {
			if b, _ := json.Marshal(got["result"]); !strings.Contains(string(b), `"service":"db"`) {
				t.Fatalf("the result: %s", b)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task: %v", got)
		}
	}
}

// onePerOwner is a task store that holds one task per owner, as a store at
// its per-owner bound does (the bound itself is each store's own test).
type onePerOwner struct {
	taskstore.Store
	mu    sync.Mutex
	owned map[string]bool
}

func (s *onePerOwner) CreateTask(ctx context.Context, t taskstore.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owned[t.Owner] {
		return taskstore.ErrTooManyTasks
	}
	s.owned[t.Owner] = true
	return s.Store.CreateTask(ctx, t)
}

// A caller whose tasks fill the store's bound for one owner gets -32029
// (429 over HTTP), and nothing runs; every other caller is still served.
func TestATaskBoundRefusesOnlyItsOwner(t *testing.T) {
	t.Parallel()
	var probe taskProbe
	store := &onePerOwner{Store: taskstore.NewMemory(), owned: map[string]bool{}}
	srv := httptest.NewServer(taskReplica(t, &probe, memstore.NewReplayStore(), store, true))
	t.Cleanup(srv.Close)
	lookup := `"name":"lookup_incident","arguments":{"incident_id":"INC-001"}`
	first := taskRPC(t, srv.URL, "mallory", "tools/call", lookup, true)
	if first.Error != nil || first.str("taskId") == "" {
		t.Fatalf("mallory's first task: %+v", first)
	}
	awaitTask(t, srv.URL, "mallory", first.str("taskId"), "completed")
	ran := probe.started.Load()
	if r := taskRPC(t, srv.URL, "mallory", "tools/call", lookup, true); r.Error == nil || r.Error.Code != mcpserver.CodeRateLimited || r.status != http.StatusTooManyRequests {
		t.Fatalf("mallory's task past the bound: %d %+v", r.status, r)
	}
	if probe.started.Load() != ran {
		t.Fatal("a refused task ran its call")
	}
	other := taskRPC(t, srv.URL, "alice", "tools/call", lookup, true)
	if other.Error != nil || other.str("taskId") == "" {
		t.Fatalf("alice's task while mallory is at the bound: %+v", other)
	}
	awaitTask(t, srv.URL, "alice", other.str("taskId"), "completed")
}

// Creating a task is a call: the caller's rate is taken then, once. A
// caller allowed one call an hour gets one task, whose run is not refused
// for the rate it already paid, and then rate_limit_exceeded with no task
// stored; another caller is served. Before, the task was stored before
// the rate was asked, and one caller filled the store.
func TestTaskCreationTakesTheRate(t *testing.T) {
	var probe taskProbe
	exec, err := runtime.NewExecutor(probe.tools(), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithRateLimits(runtime.RateLimits{Limiter: memstore.NewRateLimiter(), PerCaller: runtime.RateLimit{Calls: 1, Per: time.Hour}}))
	if err != nil {
		t.Fatal(err)
	}
	store := taskstore.NewMemory()
	s := mcpserver.New(exec, mcpserver.Options{Context: byHeader, Tasks: &mcpserver.Tasks{
		Store: store, PollInterval: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
		Mode: func(runtime.ToolInfo) mcpserver.TaskMode { return mcpserver.TaskOptional },
	}})
	srv := serve(t, s, mcpserver.HTTPOptions{Stateless: true})
	lookup := `"name":"lookup_incident","arguments":{"incident_id":"INC-001"}`
	r := taskRPC(t, srv.URL, "alice", "tools/call", lookup, true)
	if r.Error != nil || r.str("resultType") != "task" {
		t.Fatalf("the first call: %+v %v", r.Error, r.Result)
	}
	done := awaitTask(t, srv.URL, "alice", r.str("taskId"), "completed")
	if !strings.Contains(string(done.Result["result"]), "INC-001") {
		t.Fatalf("the task's run was refused: %s", done.Result["result"])
	}
	for range 20 {
		if r := taskRPC(t, srv.URL, "alice", "tools/call", lookup, true); r.Error == nil || r.Error.Code != mcpserver.CodeRateLimited {
			t.Fatalf("a call over the rate: %+v %v", r.Error, r.Result)
		}
	}
	if probe.started.Load() != 1 {
		t.Fatalf("the handler ran %d times", probe.started.Load())
	}
	if r := taskRPC(t, srv.URL, "bob", "tools/call", lookup, true); r.Error != nil || r.str("resultType") != "task" {
		t.Fatalf("another caller: %+v %v", r.Error, r.Result)
	}
}

// A task waiting for a person's answer keeps its call's arguments sealed
// in the store (it kept them as sent): nothing in the record but the
// question reads as a value of the call, and the answered call still runs with them. A record
// whose sealed arguments were altered in the store runs nothing: the task
// fails.
func TestAWaitingTaskKeepsItsArgumentsSealed(t *testing.T) {
	t.Parallel()
	var probe taskProbe
	store := taskstore.NewMemory()
	srv := httptest.NewServer(taskReplica(t, &probe, memstore.NewReplayStore(), store, true))
	t.Cleanup(srv.Close)
	yes := func(id string) string {
		return `"taskId":"` + id + `","inputResponses":{"keel/approval":{"action":"accept","content":{"approve":true}}}`
	}

	id := taskRPC(t, srv.URL, "alice", "tools/call", `"name":"create_ticket","arguments":`+ticketArgs, true).str("taskId")
	awaitTask(t, srv.URL, "alice", id, "input_required")
	rec, err := store.Task(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	rec.Input = nil // the question the person reads, whose writeOnly members are masked (TestApprovalQuestionHidesWriteOnlyMembers)
	kept, _ := json.Marshal(rec)
	if rec.Arguments == nil || strings.Contains(string(kept), "INC-042") || strings.Contains(string(kept), "on-call") {
		t.Fatalf("the waiting task's record: %s", kept)
	}
	taskRPC(t, srv.URL, "alice", "tasks/update", yes(id), true)
	if done := awaitTask(t, srv.URL, "alice", id, "completed"); probe.ticketed.Load() != 1 || !strings.Contains(string(done.Result["result"]), "TCK-0001") {
		t.Fatalf("approved: ran %d; %s", probe.ticketed.Load(), done.Result["result"])
	}

	id = taskRPC(t, srv.URL, "alice", "tools/call", `"name":"create_ticket","arguments":`+ticketArgs, true).str("taskId")
	awaitTask(t, srv.URL, "alice", id, "input_required")
	store.UpdateTask(context.Background(), id, func(r *taskstore.Record) bool {
		r.Arguments = json.RawMessage(`"` + strings.Repeat("A", 80) + `"`)
		return true
	})
	taskRPC(t, srv.URL, "alice", "tasks/update", yes(id), true)
	if failed := awaitTask(t, srv.URL, "alice", id, "failed"); probe.ticketed.Load() != 1 || !strings.Contains(string(failed.Result["error"]), "-32603") {
		t.Fatalf("altered arguments: ran %d; %s", probe.ticketed.Load(), failed.Result["error"])
	}
}

// A task's handler that reports progress moves its task: tasks/get reads
// the latest report as the status message, with a later lastUpdatedAt,
// while the call works; the progress is renewed with the lease, so within
// a poll interval.
func TestATasksProgressIsItsStatusMessage(t *testing.T) {
	t.Parallel()
	step := make(chan struct{})
	tool := runtime.NewTool(runtime.ToolInfo{Name: "index", Version: "1", Effect: runtime.EffectRead, Description: "Indexes.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (map[string]int, error) {
			report.Progress(ctx, 30, 100, "Indexing files")
			<-step
			report.Progress(ctx, 60, 100, "Indexing files")
			<-step
			return map[string]int{"files": 100}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	s := mcpserver.New(exec, mcpserver.Options{Tasks: &mcpserver.Tasks{PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}})
	h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	id := taskRPC(t, srv.URL, "alice", "tools/call", `"name":"index","arguments":{}`, true).str("taskId")
	var first rpcReply
	waitFor(t, "the first report", func() bool {
		first = taskRPC(t, srv.URL, "alice", "tasks/get", `"taskId":"`+id+`"`, true)
		return first.str("statusMessage") == "Indexing files (30 of 100)"
	})
	step <- struct{}{}
	var second rpcReply
	waitFor(t, "the second report", func() bool {
		second = taskRPC(t, srv.URL, "alice", "tasks/get", `"taskId":"`+id+`"`, true)
		return second.str("statusMessage") == "Indexing files (60 of 100)"
	})
	if second.str("status") != "working" || second.str("lastUpdatedAt") <= first.str("lastUpdatedAt") {
		t.Fatalf("working: %s then %s", first.Result["lastUpdatedAt"], second.Result["lastUpdatedAt"])
	}
	step <- struct{}{}
	awaitTask(t, srv.URL, "alice", id, "completed")
}

// The Go task client (taskclient) drives a task across two replicas on one
// Redis: started on one, followed and answered on the other, where a
// person approves it; the write runs once, and a cancel of the ended task
// changes nothing.
func TestTheTaskClientAcrossReplicas(t *testing.T) {
	t.Parallel()
	var pa, pb taskProbe
	a, b := redisTaskReplicas(t, &pa, &pb)
	client := func(url string) *taskclient.Client {
		return &taskclient.Client{Endpoint: url, Header: http.Header{callerHeader: {"alice"}}, Capabilities: map[string]any{"elicitation": map[string]any{}}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var args map[string]any
	json.Unmarshal([]byte(ticketArgs), &args)
	task, result, err := client(a.URL).Start(ctx, "create_ticket", args)
	if err != nil || task == nil || result != nil {
		t.Fatalf("start: %v %v %s", err, task, result)
	}
	var asked []string
	done, err := client(b.URL).Wait(ctx, task.ID, func(_ context.Context, t *taskclient.Task) (map[string]any, error) {
		for key := range t.InputRequests {
			asked = append(asked, key)
		}
		return map[string]any{"keel/approval": map[string]any{"action": "accept", "content": map[string]any{"approve": true}}}, nil
	})
	if err != nil || done.Status != "completed" || !strings.Contains(string(done.Result), "TCK-0001") {
		t.Fatalf("wait: %v %+v", err, done)
	}
	if len(asked) != 1 || asked[0] != "keel/approval" || pa.ticketed.Load()+pb.ticketed.Load() != 1 {
		t.Fatalf("asked %q; the write ran %d times", asked, pa.ticketed.Load()+pb.ticketed.Load())
	}
	if err := client(a.URL).Cancel(ctx, task.ID); err != nil {
		t.Fatalf("cancelling an ended task: %v", err)
	}
	if again, err := client(a.URL).Get(ctx, task.ID); err != nil || again.Status != "completed" {
		t.Fatalf("after the cancel: %v %+v", err, again)
	}
	if _, err := (&taskclient.Client{Endpoint: a.URL, Header: http.Header{callerHeader: {"mallory"}}}).Get(ctx, task.ID); err == nil {
		t.Fatal("another caller read the task")
	} else if e := new(taskclient.Error); !errors.As(err, &e) || e.Code != -32602 {
		t.Fatalf("another caller: %v", err)
	}
	read, _, err := client(b.URL).Start(ctx, "lookup_incident", map[string]any{"incident_id": "INC-001"})
	if err != nil || read == nil {
		t.Fatalf("a read as a task: %v", err)
	}
	if ended, err := client(a.URL).Wait(ctx, read.ID, nil); err != nil || !strings.Contains(string(ended.Result), "INC-001") {
		t.Fatalf("a read as a task: %v %+v", err, ended)
	}
}

// Shutdown drains a replica: a new call, a new task and a task's answer
// are refused with a wait (-32029, 429 with Retry-After) for another
// replica to take; a call already running ends and is answered; a task
// still running when Shutdown's ctx ends is cancelled, and its lease is
// released at once, so the other replica reads it failed with an unknown
// outcome without waiting out the lease. A second Shutdown, nothing
// running, returns nil.
func TestShutdownDrainsAndHandsOverTasks(t *testing.T) {
	t.Parallel()
	store := taskstore.NewMemory()
	replay := memstore.NewReplayStore()
	probe := taskProbe{release: make(chan struct{})}
	releaseOnce := sync.OnceFunc(func() { close(probe.release) })
	draining := taskServer(t, &probe, replay, store)
	ha, err := mcpserver.HTTPHandler(draining, mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	a := httptest.NewServer(ha)
	t.Cleanup(a.Close)
	var other taskProbe
	b := httptest.NewServer(taskReplica(t, &other, replay, store, true))
	t.Cleanup(b.Close)
	t.Cleanup(releaseOnce) // first: a failed test's running call ends, and the servers can close

	running := make(chan string, 1) // a call already going when the drain starts: its answer
	go func() {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-777"}}}`
		req, _ := http.NewRequest(http.MethodPost, a.URL, strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": "2025-06-18", callerHeader: "alice"} {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			running <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		running <- string(b)
	}()
	task := taskRPC(t, a.URL, "alice", "tools/call", `"name":"lookup_incident","arguments":{"incident_id":"INC-999"}`, true).str("taskId")
	waitFor(t, "the call and the task to start", func() bool { return probe.started.Load() == 2 })

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- draining.Shutdown(ctx) }()
	isRefused := func(r rpcReply) bool {
		return r.Error != nil && r.Error.Code == -32029 && r.status == http.StatusTooManyRequests
	}
	// Until Shutdown's goroutine has begun the drain, a new call runs;
	// from the first refusal on, none does.
	lookup := `"name":"lookup_incident","arguments":{"incident_id":"INC-001"}`
	before := int32(0)
	for deadline := time.Now().Add(10 * time.Second); !isRefused(taskRPC(t, a.URL, "alice", "tools/call", lookup, false)); time.Sleep(10 * time.Millisecond) {
		if before++; time.Now().After(deadline) {
			t.Fatal("a new call on a draining replica was never refused")
		}
	}
	if r := taskRPC(t, a.URL, "alice", "tools/call", lookup, true); !isRefused(r) {
		t.Fatalf("a new task on a draining replica: %d %+v", r.status, r.Error)
	}
	if r := taskRPC(t, a.URL, "alice", "tools/call", lookup, false); !isRefused(r) {
		t.Fatalf("a new call after the first refusal: %d %+v", r.status, r.Error)
	}
	if n := probe.started.Load(); n != 2+before {
		t.Fatalf("%d handlers ran, %d of them before the drain began: a refused call ran", n, 2+before)
	}
	releaseOnce()
	if answer := <-running; !strings.Contains(answer, `"service":"db"`) {
		t.Fatalf("the call running when the drain began: %s", answer)
	}
	if err := <-shut; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown with a task still running: %v", err)
	}
	r := taskRPC(t, b.URL, "alice", "tasks/get", `"taskId":"`+task+`"`, true) // at once: the lease is released
	if r.str("status") != "failed" || !strings.Contains(string(r.Result["error"]), `"outcome_unknown":true`) {
		t.Fatalf("the drained replica's task, read on the other: %s %s", r.Result["status"], r.Result["error"])
	}
	waitFor(t, "the drained task's handler to end", func() bool { return probe.cancelled.Load() == 1 })
	again, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := draining.Shutdown(again); err != nil {
		t.Fatalf("a second Shutdown, nothing running: %v", err)
	}
	if r := taskRPC(t, b.URL, "alice", "tools/call", `"name":"lookup_incident","arguments":{"incident_id":"INC-001"}`, false); r.Error != nil {
		t.Fatalf("the other replica, after: %+v", r.Error)
	}
}
