package mcpserver

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver/taskstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/report"
)

// Tasks serves calls that may outlive their request as tasks, the MCP
// extension io.modelcontextprotocol/tasks (SEP-2663, with the 2026-07-28
// revision): to a client that declares the extension on its request, a
// tools/call of a task tool answers at once with a task, whose call then
// runs on this replica through the executor's order and audit like any
// call; the client polls tasks/get for its status and result, answers an
// input request (an approval, see Approvals; a handler's own, see package
// ask) with tasks/update, and may
// tasks/cancel it. Task state lives in Store, so any replica that shares
// the store answers for any task: a cancel that reaches another replica
// ends the call where it runs (at its next renewal), and a task whose
// replica stopped reads failed once its lease is over. A task is its
// creator's: another caller's tasks/get, update or cancel reads as an
// unknown task. The handler's latest progress report is the task's status
// message. Progress and log notifications are not sent for a task
// (the extension has none). With a Runner, a task's call runs there
// instead (keeltemporal's: a Temporal workflow), outliving any replica,
// and the replica a client polls collects its result.
type Tasks struct {
	// Store keeps the tasks (default: taskstore.NewMemory, this process's).
	Store taskstore.Store
	// Mode says which tools are served as tasks. Nil serves every tool as
	// TaskOptional.
	Mode func(runtime.ToolInfo) TaskMode
	// TTL is how long a task and its result are kept from its creation
	// (default DefaultTaskTTL).
	TTL time.Duration
	// PollInterval is the least time between two tasks/get a client is
	// asked to keep, and how often a running task looks for a cancel sent
	// to another replica (default DefaultTaskPollInterval).
	PollInterval time.Duration
	// Lease is how long a running task's replica may go without renewing
	// it before any replica answers the task as failed (default
	// DefaultTaskLease). It is renewed every PollInterval (at most a third
	// of it).
	Lease time.Duration
	// Runner, when set, runs each task's call where it outlives this
	// replica; nil runs it here.
	Runner TaskRunner
	// AskFirst says, of a task tool whose questions come before its work,
	// how long its tools/call from a client of the 2026-07-28 revision
	// waits for the handler's first question before it answers with the
	// task (SEP-2663's composition of input requests and tasks). A handler
	// that asks in that time is answered as a call is, an
	// InputRequiredResult and no task (the one the call created is
	// withdrawn, its owner's place given back), and the call that brings
	// the answers creates the task: the tool gathers its input before it
	// becomes a task. A handler that ends in that time is answered with its
	// task at once. Nil, or zero for a tool, answers with the task at once,
	// and a question is the task's (input_required). Tasks run by a Runner
	// are answered at once.
	AskFirst func(runtime.ToolInfo) time.Duration
	// Logger receives what the client is not told (a store's errors).
	// Default slog.Default().
	Logger *slog.Logger
}

// TaskRunner runs a task's call where it outlives the replica that took
// it (keeltemporal.TaskRunner: a Temporal workflow of keel's activity, run
// by the executor on a worker). A run is named by an id this package keeps
// unique; starting a run that exists starts nothing new.
type TaskRunner interface {
	StartTask(ctx context.Context, run string, ec runtime.ExecutionContext, call runtime.ToolCall) error
	// TaskResult returns the run's result once it ended (done).
	TaskResult(ctx context.Context, run string) (r runtime.ToolResult, done bool, err error)
	// CancelTask asks the run to end; its result is then tool_cancelled.
	CancelTask(ctx context.Context, run string) error
}

// TaskProgressRunner is a TaskRunner that also says how far a running run
// has got: its handler's latest report.Progress, which keel puts in the
// task's statusMessage, as it does for the calls it runs itself
// (keeltemporal.TaskRunner reads it from its worker's heartbeat).
type TaskProgressRunner interface {
	TaskRunner
	// TaskProgress is TaskResult with, while the run is not done, its
	// latest progress report (nil: none yet).
	TaskProgress(ctx context.Context, run string) (r runtime.ToolResult, done bool, progress *report.ProgressEntry, err error)
}

// taskServer is a server's Tasks, with its defaults filled in.
type taskServer struct {
	Tasks
	modes     map[string]TaskMode      // of the tools served as tasks
	askFirst  map[string]time.Duration // of the tools whose questions come before their task (AskFirst)
	running   sync.Map                 // task id → *context.CancelFunc, the tasks this replica runs
	abandoned sync.Map                 // task id → true: runs a shutdown cancelled, whose end is not theirs to record
	seal      cipher.AEAD              // seals the arguments and answers a task keeps (taskargs.go)
}

// TaskMode is how a tool is served to a client that declared the tasks
// extension, and to one that did not.
type TaskMode int

const (
	// TaskNever answers every call of the tool in its request.
	TaskNever TaskMode = iota
	// TaskOptional answers a call with a task when the client declared the
	// extension, in its request otherwise.
	TaskOptional
	// TaskRequired answers a call with a task, and refuses a client that
	// did not declare the extension (-32021, naming it).
	TaskRequired
)

// Defaults of Tasks.
const (
	DefaultTaskTTL          = time.Hour
	DefaultTaskPollInterval = time.Second
	DefaultTaskLease        = 15 * time.Second
)

// TasksExtension is the extension's identifier, in the server's
// capabilities and in a client's.
const TasksExtension = "io.modelcontextprotocol/tasks"

// newTaskServer fills the defaults and reads each tool's mode and ask
// window once.
func newTaskServer(cfg Tasks, set runtime.ToolSet, secret []byte) *taskServer {
	t := &taskServer{Tasks: cfg, seal: newArgsSeal(secret)}
	if t.Store == nil {
		t.Store = taskstore.NewMemory()
	}
	if t.TTL <= 0 {
		t.TTL = DefaultTaskTTL
	}
	if t.PollInterval <= 0 {
		t.PollInterval = DefaultTaskPollInterval
	}
	if t.Lease <= 0 {
		t.Lease = DefaultTaskLease
	}
	if t.Logger == nil {
		t.Logger = slog.Default()
	}
	t.modes = map[string]TaskMode{}
	for _, tool := range set.Tools() {
		info := tool.Info()
		mode := TaskOptional
		if t.Mode != nil {
			mode = t.Mode(info)
		}
		if mode != TaskNever {
			t.modes[info.Name] = mode
		}
		if t.AskFirst == nil || mode == TaskNever {
			continue
		}
		if d := t.AskFirst(info); d > 0 {
			if t.askFirst == nil {
				t.askFirst = map[string]time.Duration{}
			}
			t.askFirst[info.Name] = d
		}
	}
	return t
}

// renewEvery is how often a running task renews its lease and looks for a
// cancel: every poll interval, and at least three times a lease.
func (t *taskServer) renewEvery() time.Duration {
	return min(t.PollInterval, t.Lease/3)
}

// The task methods. tasks/result and tasks/list of the 2025-11-25 draft
// are not served: -32601, as the extension says.
const (
	methodTaskGet    = "tasks/get"
	methodTaskUpdate = "tasks/update"
	methodTaskCancel = "tasks/cancel"
)

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
type taskParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
	// Read one by one: an answer to a key keel did not ask is ignored,
	// whatever its shape.
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
}

// taskResult is a CreateTaskResult (resultType "task") or a tasks/get
// answer (a DetailedTask, resultType "complete"): the task, flat.
type taskResult struct {
	mcp.ResultBase
	ResultType     string           `json:"resultType"`
	TaskID         string           `json:"taskId"`
	Status         taskstore.Status `json:"status"`
	StatusMessage  string           `json:"statusMessage,omitempty"`
	CreatedAt      string           `json:"createdAt"`
	LastUpdatedAt  string           `json:"lastUpdatedAt"`
	TTLMs          int64            `json:"ttlMs"`
	PollIntervalMs int64            `json:"pollIntervalMs,omitempty"`
	InputRequests  json.RawMessage  `json:"inputRequests,omitempty"`
	Result         json.RawMessage  `json:"result,omitempty"`
	Error          json.RawMessage  `json:"error,omitempty"`
}

// ackResult is the empty acknowledgement of tasks/update and tasks/cancel.
type ackResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

// registerTasks declares the extension and its methods on s. The methods
// are answered by the middleware (serveTask), which sees the request's
// verified token; the SDK needs them registered to read their params.
func registerTasks(s *mcp.Server) {
	for _, m := range []string{methodTaskGet, methodTaskUpdate, methodTaskCancel} {
		err := mcp.AddReceivingCustomMethod(s, m, func(context.Context, *mcp.ServerSession, *taskParams) (*ackResult, error) {
			return nil, protocolError(jsonrpc.CodeInternalError)
		})
		if err != nil {
			panic(err) // a method name the SDK calls standard: a bug here
		}
	}
}

// declaresTasks reports whether a request's _meta declares the extension
// among the client's capabilities. Only a request's own declaration
// counts (SEP-2663): a session's, made at initialize under 2025-11-25,
// does not.
func declaresTasks(meta map[string]any) bool {
	raw, ok := meta[mcp.MetaKeyClientCapabilities]
	if !ok {
		return false
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return false
	}
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(b, &caps) != nil {
		return false
	}
	_, ok = caps.Extensions[TasksExtension]
	return ok
}

// missingTasks is the error of a request that needs the extension from a
// client that did not declare it.
func missingTasks() error {
	return missingCapabilities(map[string]map[string]any{"extensions": {TasksExtension: map[string]any{}}})
}

// owner is who a task belongs to: its creator's tenant and principal,
// the tenant length-prefixed, since either may hold any byte (a token's
// claims): no two pairs are one owner.
func owner(ec runtime.ExecutionContext) string {
	sum := sha256.Sum256([]byte(strconv.Itoa(len(ec.Tenant)) + ":" + ec.Tenant + ec.Principal))
	return hex.EncodeToString(sum[:])
}

// newTaskID is an id no one can guess (128 random bits): a task's id is
// all a client without a verified identity holds. After them, the tag of
// the store's memory it was made under (memoryTag), when the store names
// one.
func newTaskID(memory string) string {
	var b [16]byte
	rand.Read(b[:])
	id := "task-" + hex.EncodeToString(b[:])
	if memory != "" {
		id += "." + memoryTag(memory)
	}
	return id
}

// memoryTag is a short tag of a store's memory's name, which a task's id
// carries: enough to tell one name from the next, and nothing of it.
func memoryTag(memory string) string {
	sum := sha256.Sum256([]byte(memory))
	return hex.EncodeToString(sum[:6])
}

// storeMemory names the task store's memory (taskstore.MemoryStore); ""
// for a store that names none.
func (t *taskServer) storeMemory(ctx context.Context) (string, error) {
	ms, ok := t.Store.(taskstore.MemoryStore)
	if !ok {
		return "", nil
	}
	return ms.Memory(ctx)
}

// lostTask is the task id names when the store does not find it and its
// tag names a memory the store lost since (a Redis restarted empty): it
// reads failed, its outcome unknown, as a task whose replica died does;
// ok is false for a task that was never made, or expired.
func (t *taskServer) lostTask(ctx context.Context, id string) (taskstore.Record, bool) {
	_, tag, tagged := strings.Cut(id, ".")
	if !tagged {
		return taskstore.Record{}, false
	}
	memory, err := t.storeMemory(ctx)
	if err != nil || memory == "" || memoryTag(memory) == tag {
		return taskstore.Record{}, false
	}
	now := time.Now().UTC()
	return taskstore.Record{ID: id, Status: taskstore.Failed, Message: storeLost, Error: unknownOutcomeError, Unknown: true,
		Created: now, Updated: now, Expires: now}, true
}

// storeLost is a lost task's status message.
const storeLost = "The outcome is unknown: the call may have run. The task store lost this task (it restarted empty)."

// taskCall answers a tools/call as a task when the tool is a task tool
// (ok), or leaves it to the call's usual path.
func (h *handler) taskCall(ctx context.Context, req *mcp.CallToolRequest) (res mcp.Result, err error, ok bool) {
	t := h.tasks
	if t == nil || req.Params == nil {
		return nil, nil, false
	}
	name := req.Params.Name
	mode := t.modes[name]
	if mode == TaskNever {
		return nil, nil, false
	}
	ec := h.context(ctx, req)
	if !h.exec.Visible(ctx, ec, h.exec.ToolSet().Lookup(name)) {
		return nil, nil, false // the executor answers: hidden stays hidden
	}
	if !declaresTasks(req.Params.Meta) {
		if mode == TaskRequired {
			return nil, missingTasks(), true
		}
		return nil, nil, false
	}
	if h.drain.closed() {
		return nil, h.refuseDraining(ctx, ec, req), true
	}
	memory, err := t.storeMemory(ctx)
	if err != nil {
		t.Logger.LogAttrs(ctx, slog.LevelError, "keel: the task store did not answer", slog.Any("error", err))
		return nil, protocolError(jsonrpc.CodeInternalError), true
	}
	now := time.Now().UTC()
	rec := taskstore.Record{
		ID: newTaskID(memory), Owner: owner(ec), Status: taskstore.Working,
		Created: now, Updated: now, Expires: now.Add(t.TTL), Lease: now.Add(t.Lease),
	}
	// Creating a task is a call: the caller's scopes and rate come first,
	// and a refusal is its answer, with no task stored.
	args := req.Params.Arguments
	if r := h.exec.Admit(ctx, ec, runtime.ToolCall{ID: callIDOf(req.Params), Name: name, Arguments: args}); r != nil {
		res, err := h.reply(ctx, ec, *r, args, false, false)
		return res, err, true
	}
	var call runtime.ToolCall
	if t.Runner != nil {
		var answered bool
		ec, call, answered, err = h.callOf(ctx, req, ec)
		if err != nil {
			return nil, err, true
		}
		ec.RateTaken = true
		rec.Run, rec.Lease = rec.ID, time.Time{} // the runner keeps it alive, not a lease
		rec.Tool, rec.Arguments, rec.Elicits, rec.Answered = call.Name, t.sealArgs(rec.ID, call.Arguments), canElicit(req), answered
	}
	// Created before it is answered: a tasks/get on any replica finds it.
	if err := t.Store.CreateTask(ctx, rec); err != nil {
		if errors.Is(err, taskstore.ErrTooManyTasks) { // this caller's bound: the store serves everyone else
			t.Logger.LogAttrs(ctx, slog.LevelWarn, "keel: the caller holds as many tasks as the store allows one owner; the call does not run")
			return nil, rateLimited(rateLimit{}), true
		}
		t.Logger.LogAttrs(ctx, slog.LevelError, "keel: a task could not be stored; the call does not run", slog.Any("error", err))
		return nil, protocolError(jsonrpc.CodeInternalError), true
	}
	if t.Runner != nil {
		if err := t.startRun(ctx, rec.ID, rec.Run, ec, call); err != nil {
			return nil, err, true
		}
		return t.result(rec, "task"), nil, true
	}
	return h.runHere(ctx, req, rec), nil, true
}

// runHere starts a task's call on this replica and answers the tools/call
// that created it: with the task, or, for a tool whose questions come
// before its task (AskFirst), with a question asked in time, the task
// withdrawn.
func (h *handler) runHere(ctx context.Context, req *mcp.CallToolRequest, rec taskstore.Record) mcp.Result {
	t := h.tasks
	run := *req
	params := *req.Params
	run.Params = &params
	wait := t.askFirst[req.Params.Name]
	if _, revision := req.Params.Meta[mcp.MetaKeyProtocolVersion]; wait <= 0 || !revision {
		h.startTask(ctx, rec.ID, &run, nil)
		return t.result(rec, "task")
	}
	first := newFirstRound()
	h.startTask(ctx, rec.ID, &run, first)
	if asked := first.wait(wait); asked != nil {
		t.withdraw(ctx, rec.ID)
		return asked
	}
	return t.result(rec, "task")
}

// firstRound hands a task's first question to the tools/call that
// created the task, while that call still waits (Tasks.AskFirst):
// whichever comes first, the question, the handler's end or the end of
// the wait, decides, once.
type firstRound struct {
	state atomic.Int32 // waiting, then asked or over
	asked chan *mcp.CallToolResult
	ended chan struct{}
}

const (
	roundWaiting int32 = iota
	roundAsked
	roundOver
)

func newFirstRound() *firstRound {
	return &firstRound{asked: make(chan *mcp.CallToolResult, 1), ended: make(chan struct{})}
}

// wait returns the handler's question if it asked within d, else nil:
// the call then answers with the task.
func (f *firstRound) wait(d time.Duration) *mcp.CallToolResult {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case q := <-f.asked:
		return q
	case <-f.ended:
		return nil
	case <-timer.C:
		if f.state.CompareAndSwap(roundWaiting, roundOver) || f.state.Load() == roundOver {
			return nil // the wait ended first, or the handler ended as it did
		}
		return <-f.asked // asked as the wait ended: its question won, and is in the channel or on its way
	}
}

// take is the run's end: a question while the call still waits goes to
// the call (true: the task is not to record it); anything else ends the
// wait and is the task's.
func (f *firstRound) take(res *mcp.CallToolResult, err error) bool {
	if f == nil {
		return false
	}
	if err == nil && res != nil && len(res.InputRequests) > 0 && f.state.CompareAndSwap(roundWaiting, roundAsked) {
		f.asked <- res
		return true
	}
	if f.state.CompareAndSwap(roundWaiting, roundOver) {
		close(f.ended)
	}
	return false
}

// withdraw ends a task its client never saw (its first question was the
// call's answer): it expires now, and gives its owner's place back.
func (t *taskServer) withdraw(ctx context.Context, id string) {
	now := time.Now().UTC()
	_, err := t.Store.UpdateTask(context.WithoutCancel(ctx), id, func(r *taskstore.Record) bool {
		r.Status, r.Updated, r.Expires = taskstore.Cancelled, now, now
		return true
	})
	if err != nil && !errors.Is(err, taskstore.ErrNoTask) {
		t.Logger.LogAttrs(ctx, slog.LevelWarn, "keel: a withdrawn task could not be ended; it holds its owner's place until it expires", slog.String("task", id), slog.Any("error", err))
	}
}

// startTask runs a task's call on this replica, detached from the request
// that started it: it ends with its call, a cancel, or the task's end.
// first, when set, is the creating call's wait for the first question.
func (h *handler) startTask(ctx context.Context, id string, req *mcp.CallToolRequest, first *firstRound) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	mine := &cancel
	h.tasks.running.Store(id, mine)
	h.drain.track()
	go func() {
		defer h.drain.leave()
		defer cancel()
		defer h.tasks.running.CompareAndDelete(id, mine) // a run after an answer may have taken the id
		var latest atomic.Pointer[string]
		stop := h.tasks.keep(ctx, id, cancel, &latest)
		res, err := h.run(ctx, req, runOptions{task: true, mayAsk: true, progress: func(p report.ProgressEntry) {
			text := progressText(p)
			latest.Store(&text)
		}})
		stop()
		if first.take(res, err) {
			return // the call that created the task answers its question, and withdraws it
		}
		if _, gone := h.tasks.abandoned.Load(id); gone {
			return // a shutdown cancelled it: its outcome is unknown, not this
		}
		h.tasks.settle(id, req, res, err)
	}()
}

// keep renews a running task's lease, puts its handler's latest progress
// report in its status message (which moves its lastUpdatedAt), and
// cancels its call when the task ended elsewhere (a cancel on another
// replica, its expiry).
func (t *taskServer) keep(ctx context.Context, id string, cancel context.CancelFunc, progress *atomic.Pointer[string]) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(t.renewEvery())
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			message := progress.Load()
			rec, err := t.Store.UpdateTask(ctx, id, func(r *taskstore.Record) bool {
				if r.Status != taskstore.Working || ctx.Err() != nil { // a run ended (a drain's deadline) renews nothing
					return false
				}
				now := time.Now().UTC()
				r.Lease = now.Add(t.Lease)
				if message != nil && *message != r.Message {
					r.Message, r.Updated = *message, now
				}
				return true
			})
			switch {
			case errors.Is(err, taskstore.ErrNoTask), err == nil && rec.Status.Terminal():
				cancel()
				return
			case err != nil && ctx.Err() == nil:
				t.Logger.LogAttrs(ctx, slog.LevelWarn, "keel: a task's lease could not be renewed", slog.String("task", id), slog.Any("error", err))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// settle records how a task's call ended, unless the task ended first (a
// cancel): a result is completed (a tool's error too, as isError), a
// protocol error failed, and an input request makes the task wait for the
// answer, keeping the call to run again with it. A store that does not
// answer is tried again, with backoff, for as long as the task is kept:
// the call ran, and its end must not be lost to a store's pause. Past its
// lease the task reads failed with an unknown outcome, until the end is
// stored.
func (t *taskServer) settle(id string, req *mcp.CallToolRequest, res *mcp.CallToolResult, callErr error) {
	ctx, cancel := context.WithTimeout(context.Background(), t.TTL)
	defer cancel()
	wait := settleBackoff
	for {
		try, done := context.WithTimeout(ctx, 10*time.Second)
		_, err := t.record(try, id, "", req.Params.Name, req.Params.Arguments, res, callErr)
		done()
		if err == nil || errors.Is(err, taskstore.ErrNoTask) {
			return
		}
		t.Logger.LogAttrs(ctx, slog.LevelError, "keel: a task's end could not be stored; trying again", slog.String("task", id), slog.Duration("in", wait), slog.Any("error", err))
		select {
		case <-ctx.Done():
			t.Logger.LogAttrs(ctx, slog.LevelError, "keel: a task's end was never stored; it reads failed, its outcome unknown", slog.String("task", id))
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, settleBackoffMax)
	}
}

// settleBackoff is settle's first wait before it tries a store again; each
// wait doubles, to settleBackoffMax.
var settleBackoff, settleBackoffMax = 100 * time.Millisecond, 5 * time.Second

// outcomeUnknown is the status message of a task whose end no replica
// recorded (taskstore.Record.Unknown).
const outcomeUnknown = "The outcome is unknown: the call may have run. The server running it stopped, or could not record its end; a later end replaces this."

// record stores the end of run (the task's current one) of task id.
func (t *taskServer) record(ctx context.Context, id, run, name string, args json.RawMessage, res *mcp.CallToolResult, callErr error) (taskstore.Record, error) {
	var result, input, rpcErr json.RawMessage
	switch {
	case callErr != nil:
		rpcErr = errorObject(callErr)
	case res.InputRequests != nil:
		input, _ = json.Marshal(res.InputRequests)
	default:
		result, _ = json.Marshal(res)
	}
	return t.Store.UpdateTask(ctx, id, func(r *taskstore.Record) bool {
		if r.Status.Terminal() && !r.Unknown || r.Run != run {
			return false // a cancel, or an end already known, stands
		}
		r.Updated, r.Lease, r.Unknown, r.Error = time.Now().UTC(), time.Time{}, false, nil
		switch {
		case rpcErr != nil:
			r.Status, r.Error, r.Message = taskstore.Failed, rpcErr, "The call ended with a protocol error."
		case input != nil:
			r.Status, r.Input, r.Message = taskstore.InputRequired, input, "The call waits for an answer."
			r.Tool, r.Arguments, r.State = name, t.sealArgs(id, args), res.RequestState
		default:
			r.Status, r.Result, r.Message = taskstore.Completed, result, ""
		}
		return true
	})
}

// startRun starts a task's run on the runner; a run that cannot start
// fails the task.
func (t *taskServer) startRun(ctx context.Context, id, run string, ec runtime.ExecutionContext, call runtime.ToolCall) error {
	err := t.Runner.StartTask(ctx, run, ec, call)
	if err == nil {
		return nil
	}
	t.Logger.LogAttrs(ctx, slog.LevelError, "keel: a task's run could not start", slog.String("task", id), slog.Any("error", err))
	if _, err := t.record(ctx, id, run, call.Name, call.Arguments, nil, protocolError(jsonrpc.CodeInternalError)); err != nil {
		t.Logger.LogAttrs(ctx, slog.LevelError, "keel: a task's end could not be stored", slog.String("task", id), slog.Any("error", err))
	}
	return protocolError(jsonrpc.CodeInternalError)
}

// collect asks the runner whether a task's run ended, and records how.
func (h *handler) collect(ctx context.Context, rec taskstore.Record, ec runtime.ExecutionContext) taskstore.Record {
	t := h.tasks
	var r runtime.ToolResult
	var done bool
	var progress *report.ProgressEntry
	var err error
	if pr, ok := t.Runner.(TaskProgressRunner); ok {
		r, done, progress, err = pr.TaskProgress(ctx, rec.Run)
	} else {
		r, done, err = t.Runner.TaskResult(ctx, rec.Run)
	}
	if err != nil {
		t.Logger.LogAttrs(ctx, slog.LevelWarn, "keel: the task runner did not say how a run stands", slog.String("task", rec.ID), slog.Any("error", err))
		return rec
	}
	if !done {
		if progress != nil && progressText(*progress) != rec.Message {
			return t.noteProgress(ctx, rec, progressText(*progress))
		}
		return rec
	}
	var res *mcp.CallToolResult
	args, callErr := t.openArgs(rec.ID, rec.Arguments)
	if callErr != nil { // the record was altered, or written under another secret: no question is asked from it
		t.Logger.LogAttrs(ctx, slog.LevelError, "keel: a task's arguments do not open; it fails", slog.String("task", rec.ID), slog.Any("error", callErr))
		callErr = protocolError(jsonrpc.CodeInternalError)
	} else if r.Code() == runtime.CodeInputRequired && len(r.Error.Input) > 0 { // the handler asked: the task waits for the answers
		answers, err := t.openAnswers(rec.ID, rec.Answers)
		if err != nil {
			answers = nil // a question asked again, rather than answers that do not open
		}
		res, callErr = h.inputs.required(ctx, ec, runtime.ToolCall{ID: r.CallID, Name: rec.Tool, Arguments: args, Answers: answers}, r)
	} else {
		res, callErr = h.reply(ctx, ec, r, args, rec.Elicits && !rec.Answered, false) // read later, by a client of either revision
	}
	now, err := t.record(ctx, rec.ID, rec.Run, rec.Tool, args, res, callErr)
	if err != nil {
		t.Logger.LogAttrs(ctx, slog.LevelError, "keel: a task's end could not be stored", slog.String("task", rec.ID), slog.Any("error", err))
		return rec
	}
	return now
}

// noteProgress puts a running run's latest progress in its task's status
// message (which moves its lastUpdatedAt), for every replica to read.
func (t *taskServer) noteProgress(ctx context.Context, rec taskstore.Record, message string) taskstore.Record {
	now, err := t.Store.UpdateTask(ctx, rec.ID, func(r *taskstore.Record) bool {
		if r.Status != taskstore.Working || r.Run != rec.Run || r.Message == message {
			return false
		}
		r.Message, r.Updated = message, time.Now().UTC()
		return true
	})
	if err != nil {
		t.Logger.LogAttrs(ctx, slog.LevelWarn, "keel: a task's progress could not be stored", slog.String("task", rec.ID), slog.Any("error", err))
		rec.Message = message // this answer says it still
		return rec
	}
	return now
}

// unknownOutcomeError is the error of a task whose outcome is unknown: an
// internal error whose data says so, for a client to tell it from a
// handler's failure (the call may have run; read the task again, or look
// before sending the write again).
var unknownOutcomeError = json.RawMessage(`{"code":-32603,"message":"Internal error.","data":{"outcome_unknown":true}}`)

// errorObject is a protocol error as a failed task holds it: its code and
// the code's fixed text (and a rate limit's wait), as sanitize writes it.
func errorObject(err error) json.RawMessage {
	wire := &jsonrpc.Error{Code: jsonrpc.CodeInternalError}
	errors.As(err, &wire)
	out := &jsonrpc.Error{Code: wire.Code, Message: fixedMessage(wire.Code)}
	if wire.Code == CodeRateLimited {
		out = rateLimited(limitOf(wire))
	}
	b, _ := json.Marshal(out)
	return b
}

// serveTask answers tasks/get, tasks/update and tasks/cancel.
func (h *handler) serveTask(ctx context.Context, method string, req *mcp.ServerRequest[*taskParams]) (mcp.Result, error) {
	t := h.tasks
	if req.Params == nil || !declaresTasks(req.Params.Meta) {
		return nil, missingTasks()
	}
	ec := h.context(ctx, &mcp.CallToolRequest{Session: req.Session, Extra: req.Extra, Params: &mcp.CallToolParamsRaw{}})
	rec, err := t.find(ctx, req.Params.TaskID, owner(ec))
	if err != nil {
		return nil, err
	}
	if rec.Run != "" && rec.Status == taskstore.Working {
		rec = h.collect(ctx, rec, ec)
	}
	if method == methodTaskUpdate && h.drain.closed() { // its answer would run the call here: elsewhere, then
		h.log.LogAttrs(ctx, slog.LevelInfo, "keel: the server drains (Shutdown); a task's answer is refused", slog.String("task", rec.ID))
		return nil, rateLimited(rateLimit{RetryAfterSeconds: busyRetry})
	}
	switch method {
	case methodTaskGet:
		return t.result(rec, "complete"), nil
	case methodTaskCancel:
		_, err := t.Store.UpdateTask(ctx, rec.ID, func(r *taskstore.Record) bool {
			if r.Status.Terminal() {
				return false // cancelling an ended task changes nothing
			}
			r.Status, r.Message, r.Updated = taskstore.Cancelled, "Cancelled at the client's request.", time.Now().UTC()
			r.Input, r.Tool, r.Arguments, r.Answers, r.State, r.Lease = nil, "", nil, nil, "", time.Time{}
			return true
		})
		if err != nil && !errors.Is(err, taskstore.ErrNoTask) {
			t.Logger.LogAttrs(ctx, slog.LevelError, "keel: a task's cancel could not be stored", slog.Any("error", err))
			return nil, protocolError(jsonrpc.CodeInternalError)
		}
		if cancel, ok := t.running.Load(rec.ID); ok {
			(*cancel.(*context.CancelFunc))()
		}
		if rec.Run != "" && !rec.Status.Terminal() {
			if err := t.Runner.CancelTask(ctx, rec.Run); err != nil {
				t.Logger.LogAttrs(ctx, slog.LevelWarn, "keel: a task's run could not be cancelled", slog.String("task", rec.ID), slog.Any("error", err))
			}
		}
	case methodTaskUpdate:
		if err := h.answerTask(ctx, rec.ID, req); err != nil {
			return nil, err
		}
	}
	return &ackResult{ResultType: "complete"}, nil
}

// answerTask takes answers to a waiting task's input requests (keel's
// approval question, the handler's own): each outstanding request answered
// leaves the task's inputRequests, and once none is left the task works
// again, its call run once more on this replica with every answer and the
// request state (so an approval redeems a grant as a retried call's would,
// and the handler reads its answers). Answers to anything not asked, or
// asked no longer, are ignored, as the extension says.
func (h *handler) answerTask(ctx context.Context, id string, req *mcp.ServerRequest[*taskParams]) error {
	t := h.tasks
	if len(req.Params.InputResponses) == 0 {
		return nil
	}
	var retry mcp.CallToolParamsRaw
	var run string // a runner's next run
	claimed, invalid := false, false
	_, err := t.Store.UpdateTask(ctx, id, func(r *taskstore.Record) bool {
		claimed, invalid = false, false
		if r.Status != taskstore.InputRequired || r.State == "" {
			return false
		}
		var outstanding map[string]json.RawMessage
		json.Unmarshal(r.Input, &outstanding)
		given := map[string]json.RawMessage{}
		for key, a := range req.Params.InputResponses {
			if _, asked := outstanding[key]; asked {
				given[key] = a
			}
		}
		if len(given) == 0 {
			return false
		}
		now := time.Now().UTC()
		args, err1 := t.openArgs(r.ID, r.Arguments)
		answers, err2 := t.openAnswers(r.ID, r.Answers)
		if err1 != nil || err2 != nil { // altered, or written under another secret: the call is not run from it
			r.Status, r.Error, r.Message, r.Updated = taskstore.Failed, errorObject(protocolError(jsonrpc.CodeInternalError)), "The call ended with a protocol error.", now
			r.Input, r.Tool, r.Arguments, r.Answers, r.State = nil, "", nil, nil, ""
			return true
		}
		for key, a := range given {
			answers[key] = a
			delete(outstanding, key)
		}
		var responses mcp.InputResponseMap
		if b, _ := json.Marshal(answers); json.Unmarshal(b, &responses) != nil {
			invalid = true // not answers to the questions asked
			return false
		}
		r.Updated = now
		if len(outstanding) > 0 { // more to come: the task waits on
			r.Input, _ = json.Marshal(outstanding)
			r.Answers = t.sealAnswers(r.ID, answers)
			return true
		}
		claimed = true
		retry = mcp.CallToolParamsRaw{Name: r.Tool, Arguments: args, RequestState: r.State, InputResponses: responses}
		r.Status, r.Message, r.Input, r.Answers, r.State = taskstore.Working, "", nil, nil, ""
		if r.Run != "" {
			r.Run, r.Answered = nextRun(id, r.Run), true // a run per round: a runner's run starts once
			run = r.Run
		} else {
			r.Lease, r.Tool, r.Arguments = now.Add(t.Lease), "", nil
		}
		return true
	})
	if err != nil && !errors.Is(err, taskstore.ErrNoTask) {
		t.Logger.LogAttrs(ctx, slog.LevelError, "keel: a task's answer could not be stored", slog.Any("error", err))
		return protocolError(jsonrpc.CodeInternalError)
	}
	if invalid {
		return invalidState(nil)
	}
	if !claimed {
		return nil
	}
	again := &mcp.CallToolRequest{Session: req.Session, Extra: req.Extra, Params: &retry}
	if t.Runner == nil {
		h.startTask(ctx, id, again, nil)
		return nil
	}
	h.startNextRun(ctx, id, run, again)
	return nil
}

// startNextRun starts a runner's run of task id with the answers in
// again, keeping every round's answers in the task for a question the run
// asks next (collect): the runner's result names only the new ones.
func (h *handler) startNextRun(ctx context.Context, id, run string, again *mcp.CallToolRequest) {
	t := h.tasks
	ec, call, _, err := h.callOf(ctx, again, h.context(ctx, again))
	if err != nil {
		t.record(ctx, id, run, again.Params.Name, again.Params.Arguments, nil, err)
		return // the task reads failed
	}
	if _, err := t.Store.UpdateTask(ctx, id, func(r *taskstore.Record) bool {
		if r.Run != run {
			return false
		}
		r.Answers = t.sealAnswers(id, call.Answers)
		return true
	}); err != nil {
		t.Logger.LogAttrs(ctx, slog.LevelWarn, "keel: a task's answers could not be kept; a question it asks next starts over", slog.String("task", id), slog.Any("error", err))
	}
	t.startRun(ctx, id, run, ec, call)
}

// nextRun names a task's next run on a runner: the task's id, then -2, -3
// and so on, one run per round of answers (a runner starts a run once).
func nextRun(id, run string) string {
	n := 1
	if rest, ok := strings.CutPrefix(run, id+"-"); ok {
		n, _ = strconv.Atoi(rest)
	}
	return id + "-" + strconv.Itoa(max(n, 1)+1)
}

// find returns the caller's task id, failing a working task whose replica
// stopped renewing it. Another caller's task is unknown, as one never made.
func (t *taskServer) find(ctx context.Context, id, who string) (taskstore.Record, error) {
	if id == "" {
		return taskstore.Record{}, protocolError(jsonrpc.CodeInvalidParams)
	}
	rec, err := t.Store.Task(ctx, id)
	if errors.Is(err, taskstore.ErrNoTask) {
		if lost, ok := t.lostTask(ctx, id); ok {
			return lost, nil
		}
		return taskstore.Record{}, protocolError(jsonrpc.CodeInvalidParams)
	}
	if err == nil && rec.Owner != who {
		return taskstore.Record{}, protocolError(jsonrpc.CodeInvalidParams)
	}
	if err != nil {
		t.Logger.LogAttrs(ctx, slog.LevelError, "keel: the task store did not answer", slog.Any("error", err))
		return taskstore.Record{}, protocolError(jsonrpc.CodeInternalError)
	}
	if rec.Status == taskstore.Working && !rec.Lease.IsZero() && time.Now().After(rec.Lease) {
		rec, err = t.Store.UpdateTask(ctx, id, func(r *taskstore.Record) bool {
			if r.Status != taskstore.Working || r.Lease.IsZero() || !time.Now().After(r.Lease) {
				return false
			}
			r.Status, r.Message, r.Updated, r.Lease, r.Unknown = taskstore.Failed, outcomeUnknown, time.Now().UTC(), time.Time{}, true
			r.Error = unknownOutcomeError
			return true
		})
		if err != nil {
			return taskstore.Record{}, protocolError(jsonrpc.CodeInvalidParams)
		}
	}
	return rec, nil
}

// result is the task as a client reads it.
func (t *taskServer) result(r taskstore.Record, resultType string) *taskResult {
	out := &taskResult{
		ResultType: resultType, TaskID: r.ID, Status: r.Status, StatusMessage: r.Message,
		CreatedAt: timestamp(r.Created), LastUpdatedAt: timestamp(r.Updated),
		TTLMs: t.TTL.Milliseconds(), PollIntervalMs: t.PollInterval.Milliseconds(),
	}
	if resultType == "task" {
		return out // a CreateTaskResult carries no result, error or input
	}
	switch r.Status {
	case taskstore.InputRequired:
		out.InputRequests = r.Input
	case taskstore.Completed:
		out.Result = r.Result
	case taskstore.Failed:
		out.Error = r.Error
	}
	return out
}

func timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// progressText is a progress report as a task's status message: its
// message, and how far it is ("30 of 100", or "30" with no total).
func progressText(p report.ProgressEntry) string {
	done := strconv.FormatFloat(p.Done, 'f', -1, 64)
	if p.Total > 0 {
		done += " of " + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if p.Message == "" {
		return done
	}
	return p.Message + " (" + done + ")"
}
