package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
)

var writer = runtime.ExecutionContext{Tenant: "acme", Principal: "alice", AllowSideEffects: true}

func idCall(id, args string) runtime.ToolCall {
	return runtime.ToolCall{ID: id, Name: "echo", Arguments: json.RawMessage(args)}
}

// A write sent again under its call id, with the same arguments (in
// another spelling), gets the first call's result and runs nothing; other
// arguments under that id are call_id_reused; another caller's id is its
// own. A read keeps nothing.
func TestARetriedWriteRunsOnce(t *testing.T) {
	ctx := context.Background()
	var audit bytes.Buffer
	f := newFixture(t, runtime.EffectWrite, okEcho, runtime.WithOutcomes(memstore.NewOutcomeStore(), 0),
		runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(&audit, nil)))))
	first := f.exec.Execute(ctx, writer, idCall("c1", `{"text":"hi","count":2}`))
	if !first.OK {
		t.Fatalf("first call: %s", marshal(t, first))
	}
	again := f.exec.Execute(ctx, writer, idCall("c1", `{ "count": 2, "text": "hi" }`))
	if marshal(t, again) != marshal(t, first) || f.handlerCalls.Load() != 1 || f.policyCalls.Load() != 1 {
		t.Fatalf("the call sent again: %s; handler ran %d times, policy %d", marshal(t, again), f.handlerCalls.Load(), f.policyCalls.Load())
	}
	if !strings.Contains(audit.String(), `"decision":"recorded"`) {
		t.Fatalf("the audit log does not say the call was answered from its record:\n%s", audit.String())
	}
	other := f.exec.Execute(ctx, writer, idCall("c1", `{"text":"ho"}`))
	if other.Code() != runtime.CodeCallIDReused || other.Error.Message != "This call id was used for a call with other arguments; nothing was run. Use a new call id for a new call." || f.handlerCalls.Load() != 1 {
		t.Fatalf("the id with other arguments: %s", marshal(t, other))
	}
	bob := writer
	bob.Principal = "bob"
	if r := f.exec.Execute(ctx, bob, idCall("c1", `{"text":"ho"}`)); !r.OK || f.handlerCalls.Load() != 2 {
		t.Fatalf("another caller's call c1: %s", marshal(t, r))
	}

	reads := newFixture(t, runtime.EffectRead, okEcho, runtime.WithOutcomes(memstore.NewOutcomeStore(), 0))
	for range 2 {
		reads.exec.Execute(ctx, writer, idCall("c1", `{"text":"hi"}`))
	}
	if reads.handlerCalls.Load() != 2 {
		t.Fatalf("a read ran %d times for two calls", reads.handlerCalls.Load())
	}
}

// What a handler's end says it did is kept (a declared business error, a
// result the output check refused); an end that says it may not have run
// (an internal error, a refusal, approval_required, a cancellation the
// handler returned) clears the id, and the call runs again.
func TestWhichEndsAreKept(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		behave func(context.Context, echoArgs) (echoResult, error)
		code   runtime.Code
		kept   bool
	}{
		{"business error", func(context.Context, echoArgs) (echoResult, error) {
			return echoResult{}, runtime.Fail("text_not_found", "No such text.")
		}, "text_not_found", true},
		{"invalid output", func(context.Context, echoArgs) (echoResult, error) {
			return echoResult{Text: "x", Level: "medium"}, nil
		}, runtime.CodeInvalidToolOutput, true},
		{"internal error", func(context.Context, echoArgs) (echoResult, error) {
			return echoResult{}, errors.New("the database is down")
		}, runtime.CodeToolInternalError, false},
		{"panic", func(context.Context, echoArgs) (echoResult, error) { panic("boom") }, runtime.CodeToolInternalError, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, runtime.EffectWrite, c.behave, runtime.WithOutcomes(memstore.NewOutcomeStore(), 0))
			r1 := f.exec.Execute(ctx, writer, idCall("c1", `{"text":"hi"}`))
			r2 := f.exec.Execute(ctx, writer, idCall("c1", `{"text":"hi"}`))
			if r1.Code() != c.code || r2.Code() != c.code {
				t.Fatalf("codes %q, %q; want %q", r1.Code(), r2.Code(), c.code)
			}
			if runs, want := f.handlerCalls.Load(), map[bool]int32{true: 1, false: 2}[c.kept]; runs != want {
				t.Fatalf("the handler ran %d times for two calls, want %d", runs, want)
			}
		})
	}

	f := newFixture(t, runtime.EffectWrite, okEcho, runtime.WithOutcomes(memstore.NewOutcomeStore(), 0))
	refused := writer
	refused.AllowSideEffects = false
	if r := f.exec.Execute(ctx, refused, idCall("c1", `{"text":"hi"}`)); r.Code() != runtime.CodeApprovalRequired {
		t.Fatalf("a refused write: %s", marshal(t, r))
	}
	if r := f.exec.Execute(ctx, writer, idCall("c1", `{"text":"hi"}`)); !r.OK || f.handlerCalls.Load() != 1 {
		t.Fatalf("the same call once allowed: %s", marshal(t, r))
	}

	gone, cancel := context.WithCancel(ctx)
	cancel()
	f = newFixture(t, runtime.EffectWrite, okEcho, runtime.WithOutcomes(memstore.NewOutcomeStore(), 0))
	if r := f.exec.Execute(gone, writer, idCall("c1", `{"text":"hi"}`)); r.Code() != runtime.CodeToolCancelled || f.handlerCalls.Load() != 0 {
		t.Fatalf("a call whose caller had gone: %s", marshal(t, r))
	}
	if r := f.exec.Execute(ctx, writer, idCall("c1", `{"text":"hi"}`)); !r.OK || f.handlerCalls.Load() != 1 {
		t.Fatalf("the same call sent again: %s", marshal(t, r))
	}
}

// A call sent while its first is running is call_in_progress, with when to
// try again, and runs nothing; a durable engine's later try takes the
// running claim over. A caller that leaves while its write runs does not
// lose what the write did: the handler's end is recorded for the retry.
func TestACallWhileItsFirstRuns(t *testing.T) {
	ctx := context.Background()
	started, release := make(chan struct{}, 4), make(chan struct{})
	var ignoreCancel atomic.Bool
	f := newFixture(t, runtime.EffectWrite, func(hctx context.Context, a echoArgs) (echoResult, error) {
		started <- struct{}{}
		if ignoreCancel.Load() {
			<-release // a write already under way: it finishes
		} else {
			select {
			case <-release:
			case <-hctx.Done():
				return echoResult{}, hctx.Err()
			}
		}
		return okEcho(hctx, a)
	}, runtime.WithOutcomes(memstore.NewOutcomeStore(), 0))

	done := make(chan runtime.ToolResult)
	go func() { done <- f.exec.Execute(ctx, writer, idCall("c1", `{"text":"hi"}`)) }()
	<-started
	busy := f.exec.Execute(ctx, writer, idCall("c1", `{"text":"hi"}`))
	if busy.Code() != runtime.CodeCallInProgress || busy.Error.RetryAfterSeconds < 1 || f.handlerCalls.Load() != 1 {
		t.Fatalf("the call sent while it runs: %s", marshal(t, busy))
	}
	retry := writer
	retry.Attempt = &runtime.Attempt{Engine: "temporal", WorkflowID: "wf", RunID: "r", ActivityID: "1", Number: 2}
	go func() { done <- f.exec.Execute(ctx, retry, idCall("c1", `{"text":"hi"}`)) }()
	<-started
	close(release)
	for range 2 {
		if r := <-done; !r.OK {
			t.Fatalf("a try: %s", marshal(t, r))
		}
	}
	if f.handlerCalls.Load() != 2 {
		t.Fatalf("the handler ran %d times, want 2 (the first try and the engine's retry)", f.handlerCalls.Load())
	}

	// The caller leaves; the handler, already writing, finishes anyway.
	ignoreCancel.Store(true)
	release = make(chan struct{})
	leaving, leave := context.WithCancel(ctx)
	go func() { done <- f.exec.Execute(leaving, writer, idCall("c2", `{"text":"hi"}`)) }()
	<-started
	leave()
	time.AfterFunc(20*time.Millisecond, func() { close(release) })
	if r := <-done; !r.OK {
		t.Fatalf("the call whose caller left: %s", marshal(t, r))
	}
	if r := f.exec.Execute(ctx, writer, idCall("c2", `{"text":"hi"}`)); !r.OK || f.handlerCalls.Load() != 3 {
		t.Fatalf("its retry: %s, the handler ran %d times, want 3", marshal(t, r), f.handlerCalls.Load())
	}

	// A handler past its deadline holds its id until its lease ends.
	release = make(chan struct{})
	defer close(release)
	if r := f.exec.Execute(ctx, writer, idCall("c3", `{"text":"hi"}`)); r.Code() != runtime.CodeToolTimeout {
		t.Fatalf("a handler past its deadline: %s", marshal(t, r))
	}
	<-started
	if r := f.exec.Execute(ctx, writer, idCall("c3", `{"text":"hi"}`)); r.Code() != runtime.CodeCallInProgress || f.handlerCalls.Load() != 4 {
		t.Fatalf("its retry: %s", marshal(t, r))
	}
}

// brokenOutcomes is a store that cannot answer.
type brokenOutcomes struct{}

func (brokenOutcomes) Claim(context.Context, string, runtime.Outcome, bool) (*runtime.Outcome, error) {
	return nil, errors.New("dial tcp 127.0.0.1:6379: connection refused")
}

func (brokenOutcomes) Finish(context.Context, string, string, []byte, time.Time) error {
	return errors.New("unreachable")
}

// A store that cannot answer refuses the write before the policy, with
// when to try again; the log has why, the result does not.
func TestAnOutcomeStoreThatCannotAnswerRefusesTheWrite(t *testing.T) {
	f := newFixture(t, runtime.EffectWrite, okEcho, runtime.WithOutcomes(brokenOutcomes{}, 0))
	r := f.exec.Execute(context.Background(), writer, idCall("c1", `{"text":"hi"}`))
	if r.Code() != runtime.CodeIdempotencyUnchecked || r.Error.RetryAfterSeconds != 1 || f.handlerCalls.Load() != 0 || f.policyCalls.Load() != 0 {
		t.Fatalf("%s; handler %d, policy %d", marshal(t, r), f.handlerCalls.Load(), f.policyCalls.Load())
	}
	if b := marshal(t, r); strings.Contains(b, "6379") || !strings.Contains(f.log.String(), "connection refused") {
		t.Fatalf("the result %s, the log %s", b, f.log.String())
	}
	if _, err := runtime.NewExecutor(f.exec.ToolSet(), runtime.WithOutcomes(nil, 0)); err == nil {
		t.Fatal("WithOutcomes(nil) was accepted")
	}
	if _, err := runtime.NewExecutor(f.exec.ToolSet(), runtime.WithOutcomes(memstore.NewOutcomeStore(), -time.Second)); err == nil {
		t.Fatal("a negative keep was accepted")
	}
}
