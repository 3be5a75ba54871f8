package keeltemporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/report"
)

// Options configure the worker's side.
type Options struct {
	// MaxResultBytes bounds a call's result as JSON (default
	// DefaultMaxResultBytes; at most MaxPayloadBytes). A larger result is
	// invalid_tool_output, never a payload Temporal refuses.
	MaxResultBytes int
}

// executorActivity is the activity of one executor.
type executorActivity struct {
	exec      *runtime.Executor
	maxResult int
}

// Register registers, on w, the activity that runs calls through exec. It
// refuses a nil executor and a bound outside (0, MaxPayloadBytes].
func Register(w worker.ActivityRegistry, exec *runtime.Executor, opts Options) error {
	switch {
	case w == nil:
		return errors.New("keeltemporal: the worker is nil")
	case exec == nil:
		return errors.New("keeltemporal: the executor is nil")
	case opts.MaxResultBytes < 0 || opts.MaxResultBytes > MaxPayloadBytes:
		return fmt.Errorf("keeltemporal: MaxResultBytes is %d; it must be in (0, %d], or 0 for the default", opts.MaxResultBytes, MaxPayloadBytes)
	}
	a := &executorActivity{exec: exec, maxResult: opts.MaxResultBytes}
	if a.maxResult == 0 {
		a.maxResult = DefaultMaxResultBytes
	}
	w.RegisterActivityWithOptions(a.execute, activity.RegisterOptions{Name: ActivityName})
	return nil
}

// retried are the codes a try ends with that the retry policy may retry:
// the handler failed or ran out of time, so another try may succeed.
func retried(code runtime.Code) bool {
	return code == runtime.CodeToolInternalError || code == runtime.CodeToolTimeout
}

// execute is one try of one call.
func (a *executorActivity) execute(ctx context.Context, req Request) (runtime.ToolResult, error) {
	info := activity.GetInfo(ctx)
	ec := req.Context
	ec.Attempt = &runtime.Attempt{Engine: Engine, WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID,
		ActivityID: info.ActivityID, Number: int(info.Attempt)}

	version := a.version(req.Call.Name)
	beat := newHeartbeater(ctx, version, info.HeartbeatTimeout)
	defer beat.stop()
	ctx, stopProgress := report.WithProgress(ctx, beat.progress, 0)
	r := a.exec.Execute(ctx, ec, req.toolCall())
	stopProgress()

	code := r.Code()
	switch {
	case code == runtime.CodeToolCancelled && ctx.Err() != nil:
		return r, temporal.NewCanceledError(r)
	case retried(code):
		return r, temporal.NewApplicationErrorWithOptions(r.Error.Message, string(code), temporal.ApplicationErrorOptions{Details: []any{r}})
	}
	if size := resultSize(r); size > a.maxResult {
		activity.GetLogger(ctx).Error("keel: the result is too large for a Temporal payload; refused",
			"call_id", req.Call.ID, "tool", r.ToolName, "bytes", size, "limit", a.maxResult)
		return req.Call.Ended(version, runtime.CodeInvalidToolOutput), nil
	}
	return r, nil
}

// version is the version of the tool a name selects, "" for none: what
// Temporal can tell of the call if its worker is lost.
func (a *executorActivity) version(name string) string {
	t := a.exec.ToolSet().Lookup(name)
	if t == nil {
		return ""
	}
	if info := t.Info(); info.Name == name {
		return info.Version
	}
	return ""
}

func resultSize(r runtime.ToolResult) int {
	b, err := json.Marshal(r)
	if err != nil {
		return int(^uint(0) >> 1)
	}
	return len(b)
}

// heartbeater tells Temporal the worker is alive while a handler runs:
// at once, at each progress report (as the details), and at a third of the
// heartbeat timeout between them, so a handler that reports nothing is not
// taken for a lost worker, and a cancel reaches it (Temporal delivers one
// in a heartbeat's answer).
type heartbeater struct {
	ctx  context.Context
	mu   sync.Mutex
	last Heartbeat
	done chan struct{}
	wg   sync.WaitGroup
}

func newHeartbeater(ctx context.Context, version string, timeout time.Duration) *heartbeater {
	h := &heartbeater{ctx: ctx, last: Heartbeat{ToolVersion: version}, done: make(chan struct{})}
	activity.RecordHeartbeat(ctx, h.last)
	if timeout > 0 {
		h.wg.Add(1)
		go h.loop(max(timeout/3, 10*time.Millisecond))
	}
	return h
}

func (h *heartbeater) loop(every time.Duration) {
	defer h.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-h.ctx.Done():
			return
		case <-t.C:
			h.mu.Lock()
			activity.RecordHeartbeat(h.ctx, h.last)
			h.mu.Unlock()
		}
	}
}

// progress records a report and heartbeats it (the SDK batches heartbeats
// within its own interval, so a chatty handler costs no extra requests).
func (h *heartbeater) progress(p report.ProgressEntry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last.Progress = &p
	activity.RecordHeartbeat(h.ctx, h.last)
}

func (h *heartbeater) stop() {
	close(h.done)
	h.wg.Wait()
}
