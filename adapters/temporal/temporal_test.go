package keeltemporal_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	keeltemporal "github.com/keelgen/keel/adapters/temporal"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/redisreplay"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

// The tests run against a real Temporal server: the Temporal CLI's dev
// server, on loopback, started once for the test binary. .ci/run installs
// the CLI (go install github.com/temporalio/cli/cmd/temporal) and names it
// in KEEL_TEMPORAL_CLI; without it (and outside CI) the tests are skipped,
// saying how to run them.

var (
	hostPort  string // the dev server's frontend, "" when there is none
	serverErr error
)

const grantSecret = "the workers share this key: 32+ bytes"

func TestMain(m *testing.M) {
	if hp := os.Getenv("KEELTEMPORAL_WORKER"); hp != "" {
		os.Exit(runWorkerProcess(hp))
	}
	var srv *testsuite.DevServer
	cli := os.Getenv("KEEL_TEMPORAL_CLI")
	if cli == "" {
		cli, _ = exec.LookPath("temporal")
	}
	if cli != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		srv, serverErr = testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
			ExistingPath:  cli,
			ClientOptions: &client.Options{Logger: quiet()},
			LogLevel:      "error",
			Stdout:        io.Discard, Stderr: io.Discard,
		})
		cancel()
		if serverErr == nil {
			hostPort = srv.FrontendHostPort()
		}
	}
	code := m.Run()
	if srv != nil {
		srv.Stop()
	}
	os.Exit(code)
}

func quiet() tlog.Logger { return tlog.NewStructuredLogger(slog.New(slog.DiscardHandler)) }

// temporalClient is a client of the dev server, or skips (fails in CI)
// when there is none.
func temporalClient(t *testing.T) client.Client {
	t.Helper()
	switch {
	case serverErr != nil:
		t.Fatalf("the Temporal dev server did not start: %v", serverErr)
	case hostPort == "" && os.Getenv("CI") != "":
		t.Fatal("no Temporal CLI: set KEEL_TEMPORAL_CLI (.ci/run installs it)")
	case hostPort == "":
		t.Skip("no Temporal CLI: go install github.com/temporalio/cli/cmd/temporal@v1.5.1, then set KEEL_TEMPORAL_CLI to it")
	}
	c, err := client.Dial(client.Options{HostPort: hostPort, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// agentInput is what the test workflow runs: calls in order, under one
// execution context, with the activity options given.
type agentInput struct {
	Context       runtime.ExecutionContext
	Calls         []runtime.ToolCall
	ActivityQueue string
	Heartbeat     time.Duration
	MaxAttempts   int32
	AskApproval   bool // wait for a grant when a call needs approval
}

// agent is a harness's agent loop moved into a workflow: each tool call is
// keel's activity; a call that needs approval waits for a person's grant,
// which a query shows and a signal brings.
func agent(ctx workflow.Context, in agentInput) ([]runtime.ToolResult, error) {
	var pending *runtime.ApprovalRequest
	if err := workflow.SetQueryHandler(ctx, "pending_approval", func() (*runtime.ApprovalRequest, error) { return pending, nil }); err != nil {
		return nil, err
	}
	grants := workflow.GetSignalChannel(ctx, "grant")
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           in.ActivityQueue,
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    in.Heartbeat,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: in.MaxAttempts},
	})
	var out []runtime.ToolResult
	for _, call := range in.Calls {
		ec := in.Context
		r, err := keeltemporal.Execute(ctx, ec, call)
		if err != nil {
			return append(out, r), err
		}
		if in.AskApproval && r.Code() == runtime.CodeApprovalRequired && r.Error.Approval != nil {
			pending = r.Error.Approval
			grants.Receive(ctx, &ec.Grant)
			pending = nil
			if r, err = keeltemporal.Execute(ctx, ec, call); err != nil {
				return append(out, r), err
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// audit collects the executor's audit records of one worker.
type audit struct {
	mu   sync.Mutex
	recs []map[string]any
}

func (a *audit) Write(p []byte) (int, error) {
	var rec map[string]any
	if json.Unmarshal(p, &rec) == nil {
		a.mu.Lock()
		a.recs = append(a.recs, rec)
		a.mu.Unlock()
	}
	return len(p), nil
}

func (a *audit) records() []map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]map[string]any(nil), a.recs...)
}

// newExecutor is a worker's executor over the test tools: grants with the
// shared key, redeemed in store, every call in the audit.
func newExecutor(l ledger, stall stalled, store runtime.ReplayStore, auditTo io.Writer) (*runtime.Executor, error) {
	set, err := testTools(l, stall)
	if err != nil {
		return nil, err
	}
	return runtime.NewExecutor(set,
		runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithApprovals(grant.HMACKey([]byte(grantSecret)), store),
		runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(auditTo, nil)))))
}

// startWorkers starts, in this process, a worker for the test workflow on
// wfQueue and one for keel's activity on actQueue (when not "").
func startWorkers(t *testing.T, c client.Client, wfQueue, actQueue string, exec *runtime.Executor, opts keeltemporal.Options) {
	t.Helper()
	w := worker.New(c, wfQueue, worker.Options{})
	w.RegisterWorkflow(agent)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	if actQueue == "" {
		return
	}
	aw := worker.New(c, actQueue, worker.Options{})
	if err := keeltemporal.Register(aw, exec, opts); err != nil {
		t.Fatal(err)
	}
	if err := aw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(aw.Stop)
}

func run(t *testing.T, c client.Client, id, queue string, in agentInput) client.WorkflowRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wr, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue, WorkflowExecutionTimeout: 2 * time.Minute}, agent, in)
	if err != nil {
		t.Fatal(err)
	}
	return wr
}

func results(t *testing.T, wr client.WorkflowRun, within time.Duration) ([]runtime.ToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var out []runtime.ToolResult
	err := wr.Get(ctx, &out)
	return out, err
}

func call(id, name, args string) runtime.ToolCall {
	return runtime.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// activityTries counts, in a workflow's history, the activities that
// started and the retries Temporal made of them (a retried activity's
// started event, written when it ends, carries its last attempt).
func activityTries(t *testing.T, c client.Client, wr client.WorkflowRun) (started, retries int) {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), wr.GetID(), wr.GetRunID(), false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch ev.GetEventType() {
		case enums.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			started++
			retries += int(ev.GetActivityTaskStartedEventAttributes().GetAttempt()) - 1
		}
	}
	return started, retries
}

// Every answer keel gives is final: the activity completes with it, once,
// and Temporal never retries it (the retry policy allows 5 tries). The
// results are keel's, with its codes and fixed messages.
func TestFinalAnswersAreNotRetried(t *testing.T) {
	c := temporalClient(t)
	var a audit
	exec, err := newExecutor(ledger(t.TempDir()), nil, memstore.NewReplayStore(), &a)
	if err != nil {
		t.Fatal(err)
	}
	startWorkers(t, c, "final-wf", "final-act", exec, keeltemporal.Options{})
	calls := []runtime.ToolCall{
		call("c-ok", "lookup", `{"id":"INC-1"}`),
		call("c-unknown", "delete_prod", `{}`),
		call("c-invalid", "lookup", `{"id":""}`),
		call("c-dup", "lookup", `{"id":"a","id":"b"}`),
		call("c-business", "lookup", `{"id":"missing"}`),
		call("c-approval", "rollout", `{"service":"api","steps":1,"step_ms":0}`),
		call("c-scope", "secret", `{}`),
	}
	want := []runtime.Code{"", runtime.CodeUnknownTool, runtime.CodeInvalidArguments, runtime.CodeInvalidArguments,
		"not_found", runtime.CodeApprovalRequired, runtime.CodeInsufficientScope}
	wr := run(t, c, "final-answers", "final-wf", agentInput{Context: runtime.ExecutionContext{Tenant: "acme", Principal: "alice"},
		Calls: calls, ActivityQueue: "final-act", Heartbeat: 5 * time.Second, MaxAttempts: 5})
	out, err := results(t, wr, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(calls) {
		t.Fatalf("%d results for %d calls", len(out), len(calls))
	}
	for i, r := range out {
		if r.Code() != want[i] || r.CallID != calls[i].ID || r.OK != (want[i] == "") {
			t.Errorf("%s: %+v %+v, want %q", calls[i].ID, r, r.Error, want[i])
		}
	}
	if out[0].OK && string(out[0].Data) != `{"id":"INC-1","status":"open"}` {
		t.Errorf("the lookup's data: %s", out[0].Data)
	}
	if out[5].Error == nil || out[5].Error.Approval == nil || out[5].Error.Approval.CallID != "c-approval" {
		t.Errorf("approval_required does not carry its request: %+v", out[5].Error)
	}
	started, retries := activityTries(t, c, wr)
	if started != len(calls) || retries != 0 {
		t.Errorf("%d activities started and %d retries for %d final answers", started, retries, len(calls))
	}
	if recs := a.records(); len(recs) != len(calls) {
		t.Errorf("%d audit records for %d calls", len(recs), len(calls))
	} else if r := recs[0]; r["workflow_id"] != "final-answers" || r["run_id"] != wr.GetRunID() || r["activity_id"] == "" || r["attempt"] != float64(1) || r["engine"] != "temporal" {
		t.Errorf("the audit record does not follow the call into Temporal: %v", r)
	}
}

// tool_internal_error and tool_timeout follow the retry policy: a handler
// that fails its first try succeeds on the second; one that always fails
// ends, after its tries, with keel's fixed message and no detail.
func TestInternalErrorsFollowTheRetryPolicy(t *testing.T) {
	c := temporalClient(t)
	var a audit
	exec, err := newExecutor(ledger(t.TempDir()), nil, memstore.NewReplayStore(), &a)
	if err != nil {
		t.Fatal(err)
	}
	startWorkers(t, c, "retry-wf", "retry-act", exec, keeltemporal.Options{})
	wr := run(t, c, "retries", "retry-wf", agentInput{Calls: []runtime.ToolCall{call("c-flaky", "flaky", `{}`), call("c-broken", "broken", `{}`)},
		ActivityQueue: "retry-act", Heartbeat: 5 * time.Second, MaxAttempts: 3})
	out, err := results(t, wr, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || !out[0].OK || string(out[0].Data) != `{"text":"second try"}` {
		t.Fatalf("the flaky call: %+v", out)
	}
	b := out[1]
	if b.Code() != runtime.CodeToolInternalError || b.Error.Message != "The tool failed with an internal error." || b.ToolVersion == nil || *b.ToolVersion != "1.0" {
		t.Errorf("the broken call: %+v %+v", b, b.Error)
	}
	if raw, _ := json.Marshal(b); strings.Contains(string(raw), "/srv/") || strings.Contains(string(raw), "panic") {
		t.Errorf("internal detail reached the result: %s", raw)
	}
	started, retries := activityTries(t, c, wr)
	if started != 2 || retries != 1+2 {
		t.Errorf("%d activities and %d retries; want 2 and 3 (flaky once, broken twice)", started, retries)
	}
	tries := map[string][]float64{}
	for _, r := range a.records() {
		tries[r["call_id"].(string)] = append(tries[r["call_id"].(string)], r["attempt"].(float64))
	}
	if fmt.Sprint(tries["c-flaky"]) != "[1 2]" || fmt.Sprint(tries["c-broken"]) != "[1 2 3]" {
		t.Errorf("the audit's tries: %v", tries)
	}
}

// Cancelling the workflow mid-call ends the handler's context, the call is
// tool_cancelled in the audit, and the workflow ends cancelled; the
// handler's progress was visible as the activity's heartbeat before.
func TestCancelledWorkflowEndsTheHandler(t *testing.T) {
	c := temporalClient(t)
	var a audit
	stall := make(stalled, 1)
	exec, err := newExecutor(ledger(t.TempDir()), stall, memstore.NewReplayStore(), &a)
	if err != nil {
		t.Fatal(err)
	}
	startWorkers(t, c, "cancel-wf", "cancel-act", exec, keeltemporal.Options{})
	wr := run(t, c, "cancel", "cancel-wf", agentInput{Calls: []runtime.ToolCall{call("c-stall", "stall", `{}`)},
		ActivityQueue: "cancel-act", Heartbeat: 2 * time.Second, MaxAttempts: 3})
	beat := waitHeartbeat(t, c, wr, func(h keeltemporal.Heartbeat) bool { return h.Progress != nil && h.Progress.Message == "waiting" })
	if beat.ToolVersion != "1.0" {
		t.Errorf("heartbeat %+v", beat)
	}
	if err := c.CancelWorkflow(context.Background(), wr.GetID(), wr.GetRunID()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-stall:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the handler's context ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the handler's context did not end within 30 s of the cancel")
	}
	_, err = results(t, wr, 30*time.Second)
	var canceled *temporal.CanceledError
	if !errors.As(err, &canceled) {
		t.Errorf("the workflow ended with %v, not cancelled", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(a.records()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if recs := a.records(); len(recs) != 1 || recs[0]["code"] != string(runtime.CodeToolCancelled) {
		t.Errorf("the audit: %v", recs)
	}
}

// A result over the worker's bound is invalid_tool_output, never a payload
// Temporal refuses; a call without an id never schedules an activity.
func TestResultBoundAndCallID(t *testing.T) {
	c := temporalClient(t)
	exec, err := newExecutor(ledger(t.TempDir()), nil, memstore.NewReplayStore(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	startWorkers(t, c, "bound-wf", "bound-act", exec, keeltemporal.Options{MaxResultBytes: 1024})
	wr := run(t, c, "bound", "bound-wf", agentInput{Calls: []runtime.ToolCall{call("c-big", "big", `{}`), call("", "lookup", `{"id":"x"}`)},
		ActivityQueue: "bound-act", Heartbeat: 5 * time.Second, MaxAttempts: 3})
	out, err := results(t, wr, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Code() != runtime.CodeInvalidToolOutput || out[0].ToolVersion == nil || out[1].Code() != runtime.CodeInvalidArguments {
		t.Fatalf("results %+v", out)
	}
	if started, _ := activityTries(t, c, wr); started != 1 {
		t.Errorf("%d activities started; the call without an id scheduled one", started)
	}
	for _, bad := range []int{-1, keeltemporal.MaxPayloadBytes + 1} {
		if err := keeltemporal.Register(worker.New(c, "unused", worker.Options{}), exec, keeltemporal.Options{MaxResultBytes: bad}); err == nil {
			t.Errorf("Register took MaxResultBytes %d", bad)
		}
	}
	if err := keeltemporal.Register(worker.New(c, "unused", worker.Options{}), nil, keeltemporal.Options{}); err == nil {
		t.Error("Register took a nil executor")
	}
}

// waitHeartbeat waits (at most 30 s) for the workflow's pending activity to
// heartbeat details that ok accepts, and returns them.
func waitHeartbeat(t *testing.T, c client.Client, wr client.WorkflowRun, ok func(keeltemporal.Heartbeat) bool) keeltemporal.Heartbeat {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last keeltemporal.Heartbeat
	for time.Now().Before(deadline) {
		d, err := c.DescribeWorkflowExecution(context.Background(), wr.GetID(), wr.GetRunID())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range d.GetPendingActivities() {
			if p.GetHeartbeatDetails() == nil {
				continue
			}
			var h keeltemporal.Heartbeat
			if err := converter.GetDefaultDataConverter().FromPayloads(p.GetHeartbeatDetails(), &h); err == nil {
				last = h
				if ok(h) {
					return h
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no heartbeat as wanted within 30 s; the last: %+v", last)
	return last
}

// A worker process killed (SIGKILL) in the middle of an approved rollout:
// Temporal finds it lost by its heartbeat timeout and retries the call on
// another worker process, which redeems the same grant again for this one
// call (the shared Redis store knows the call) and finishes it. One grant,
// two tries, one effect, one result; and the grant is still refused to any
// other call.
func TestKilledWorkerCallFinishesElsewhere(t *testing.T) {
	c := temporalClient(t)
	srv := redistest.Start(t)
	dir := ledger(t.TempDir())
	startWorkers(t, c, "kill-wf", "", nil, keeltemporal.Options{})

	first := startWorkerProcess(t, srv.Addr, string(dir), "kill-act", "first")
	alice := runtime.ExecutionContext{Tenant: "acme", Principal: "alice"}
	rollout := call("c-rollout", "rollout", `{"service":"api","steps":40,"step_ms":100}`)
	wr := run(t, c, "killed-worker", "kill-wf", agentInput{Context: alice, Calls: []runtime.ToolCall{rollout},
		ActivityQueue: "kill-act", Heartbeat: 2 * time.Second, MaxAttempts: 3, AskApproval: true})

	// A person approves the call the workflow waits on.
	req := waitApproval(t, c, wr)
	tok, err := grant.Issue(grant.HMACKey([]byte(grantSecret)), req.Grant(alice.Tenant, alice.Principal, time.Now().Add(10*time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SignalWorkflow(context.Background(), wr.GetID(), wr.GetRunID(), "grant", tok); err != nil {
		t.Fatal(err)
	}
	// The rollout runs on the first worker, its progress in the heartbeats.
	beat := waitHeartbeat(t, c, wr, func(h keeltemporal.Heartbeat) bool { return h.Progress != nil && h.Progress.Done >= 3 })
	if beat.ToolVersion != "1.0" || beat.Progress.Total != 40 || !strings.HasPrefix(beat.Progress.Message, "step ") {
		t.Errorf("heartbeat %+v", beat)
	}
	first.kill(t)
	second := startWorkerProcess(t, srv.Addr, string(dir), "kill-act", "second")

	out, err := results(t, wr, 90*time.Second)
	if err != nil {
		t.Fatalf("the workflow: %v\nfirst worker: %s\nsecond worker: %s", err, first.stderr(), second.stderr())
	}
	if len(out) != 1 || !out[0].OK {
		t.Fatalf("results %+v\nsecond worker: %s", out, second.stderr())
	}
	if effects := dir.effects(); len(effects) != 1 {
		t.Errorf("%d effects, want 1: %v", len(effects), effects)
	}
	tries := dir.tries()
	if len(tries) != 2 || !strings.HasSuffix(tries[0], " 1") || !strings.HasSuffix(tries[1], " 2") || strings.Fields(tries[0])[0] == strings.Fields(tries[1])[0] {
		t.Errorf("tries (pid, attempt): %q; want attempt 1 and 2, in two processes", tries)
	}
	var data struct{ Key string }
	if json.Unmarshal(out[0].Data, &data) != nil || !strings.HasSuffix(dir.effects()[0], "effect-"+data.Key) {
		t.Errorf("the effect is not the result's idempotency key: %s, %v", out[0].Data, dir.effects())
	}
	// The second worker's audit: the retry of this call, approved, done.
	var retry map[string]any
	for _, r := range second.audit() {
		if r["call_id"] == "c-rollout" {
			retry = r
		}
	}
	if retry == nil || retry["attempt"] != float64(2) || retry["decision"] != "approved" || retry["code"] != "ok" || retry["workflow_id"] != "killed-worker" {
		t.Errorf("the retry's audit record: %v", retry)
	}
	// The grant is spent for any other call, on any replica.
	store, err := redisreplay.New(redis.NewClient(&redis.Options{Addr: srv.Addr}), redisreplay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	exec, err := newExecutor(dir, nil, store, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	replay := alice
	replay.Grant = tok
	if r := exec.Execute(context.Background(), replay, rollout); r.Code() != runtime.CodeApprovalRequired {
		t.Errorf("the grant ran its call again outside a retry: %+v", r.Error)
	}
	replay.Attempt = &runtime.Attempt{Engine: keeltemporal.Engine, WorkflowID: "other", Number: 2}
	other := rollout
	other.ID = "c-other"
	if r := exec.Execute(context.Background(), replay, other); r.Code() != runtime.CodeApprovalRequired {
		t.Errorf("the grant ran another call: %+v", r.Error)
	}
	if effects := dir.effects(); len(effects) != 1 {
		t.Errorf("%d effects after the replays", len(effects))
	}
}

func waitApproval(t *testing.T, c client.Client, wr client.WorkflowRun) runtime.ApprovalRequest {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if v, err := c.QueryWorkflow(context.Background(), wr.GetID(), wr.GetRunID(), "pending_approval"); err == nil {
			var req *runtime.ApprovalRequest
			if v.Get(&req) == nil && req != nil {
				return *req
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the workflow asked for no approval within 30 s")
	return runtime.ApprovalRequest{}
}

// workerProcess is this test binary run as a worker of keel's activity
// (runWorkerProcess), in a process of its own that a test can kill.
type workerProcess struct {
	cmd       *exec.Cmd
	auditPath string
	errPath   string
}

func startWorkerProcess(t *testing.T, redisAddr, ledgerDir, queue, name string) *workerProcess {
	t.Helper()
	dir := t.TempDir()
	p := &workerProcess{auditPath: filepath.Join(dir, "audit"), errPath: filepath.Join(dir, "stderr")}
	errFile, err := os.Create(p.errPath)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), "KEELTEMPORAL_WORKER="+hostPort, "KEELTEMPORAL_REDIS="+redisAddr,
		"KEELTEMPORAL_LEDGER="+ledgerDir, "KEELTEMPORAL_AUDIT="+p.auditPath, "KEELTEMPORAL_QUEUE="+queue)
	p.cmd.Stderr = errFile
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.kill(t) })
	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- strings.TrimSpace(line) == "ready"
		io.Copy(io.Discard, out)
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("the %s worker did not start: %s", name, p.stderr())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the %s worker did not start within 30 s: %s", name, p.stderr())
	}
	return p
}

// kill ends the process at once, as an OOM kill or a drained node would.
func (p *workerProcess) kill(t *testing.T) {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

func (p *workerProcess) stderr() string {
	b, _ := os.ReadFile(p.errPath)
	return string(b)
}

func (p *workerProcess) audit() []map[string]any {
	b, _ := os.ReadFile(p.auditPath)
	var a audit
	for _, line := range strings.Split(string(b), "\n") {
		a.Write([]byte(line))
	}
	return a.records()
}

// runWorkerProcess is the worker process: keel's activity on the test
// tools and the workflow of an MCP task, grants in the shared Redis, until
// it is killed.
func runWorkerProcess(hp string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	store, err := redisreplay.New(redis.NewClient(&redis.Options{Addr: os.Getenv("KEELTEMPORAL_REDIS")}), redisreplay.Options{})
	if err != nil {
		return fail(err)
	}
	auditFile, err := os.OpenFile(os.Getenv("KEELTEMPORAL_AUDIT"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fail(err)
	}
	exec, err := newExecutor(ledger(os.Getenv("KEELTEMPORAL_LEDGER")), nil, store, auditFile)
	if err != nil {
		return fail(err)
	}
	c, err := client.Dial(client.Options{HostPort: hp, Logger: quiet()})
	if err != nil {
		return fail(err)
	}
	w := worker.New(c, os.Getenv("KEELTEMPORAL_QUEUE"), worker.Options{})
	if err := keeltemporal.Register(w, exec, keeltemporal.Options{}); err != nil {
		return fail(err)
	}
	keeltemporal.RegisterTaskWorkflow(w) // an MCP task's call, for TaskRunner
	if err := w.Start(); err != nil {
		return fail(err)
	}
	fmt.Println("ready")
	select {}
}
