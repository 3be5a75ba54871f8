package redisreplay_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/redisreplay"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// ledger is the effect of a write tool that several replicas run: one
// entry per run of its handler.
type ledger struct {
	runs atomic.Int32
	gate chan struct{} // a run waits here until it is closed
}

type chargeArgs struct {
	Account string `json:"account"`
	Cents   int    `json:"cents"`
}

type chargeResult struct {
	Receipt int32 `json:"receipt"`
}

// outcomeReplica is one harness process with its own client of the
// shared Redis, its writes idempotent by call id.
func outcomeReplica(t *testing.T, addr string, l *ledger) *runtime.Executor {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	store, err := redisreplay.New(client, redisreplay.Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	charge := runtime.NewTool(runtime.ToolInfo{Name: "charge", Version: "1", Effect: runtime.EffectWrite, Description: "Charges an account.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["account","cents"],"properties":{"account":{"type":"string"},"cents":{"type":"integer"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["receipt"],"properties":{"receipt":{"type":"integer"}}}`),
		Timeout:      10 * time.Second},
		runtime.Handle(func(_ context.Context, a chargeArgs) (chargeResult, error) {
			n := l.runs.Add(1)
			<-l.gate // the charge is under way: it finishes whatever the caller does
			return chargeResult{Receipt: n}, nil
		}))
	set, err := keeltest.Locked(charge)
	if err != nil {
		t.Fatal(err)
	}
	exec, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithOutcomes(store, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

var payer = runtime.ExecutionContext{Tenant: "acme", Principal: "alice", AllowSideEffects: true}

func chargeCall(id string) runtime.ToolCall {
	return runtime.ToolCall{ID: id, Name: "charge", Arguments: json.RawMessage(`{"account":"A-1","cents":500}`)}
}

// One write sent eight times at once, to two replicas, runs once: every
// other copy is call_in_progress; once it ended, every copy on either
// replica gets its result. A caller that leaves mid-write (a dropped
// connection) loses nothing: its retry on the other replica gets what the
// write did.
func TestAWriteRetriedOnTwoReplicasRunsOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	l := &ledger{gate: make(chan struct{})}
	replicas := []*runtime.Executor{outcomeReplica(t, srv.Addr, l), outcomeReplica(t, srv.Addr, l)}
	ctx := context.Background()

	answers := make(chan runtime.ToolResult, 8)
	var wg sync.WaitGroup
	for i := range cap(answers) {
		wg.Go(func() { answers <- replicas[i%2].Execute(ctx, payer, chargeCall("pay-1")) })
	}
	// Every copy but the running one answers while it runs.
	var ok []runtime.ToolResult
	for range cap(answers) - 1 {
		if r := <-answers; r.Code() != runtime.CodeCallInProgress || r.Error.RetryAfterSeconds < 1 {
			t.Fatalf("a copy answered %+v while the write ran", r)
		}
	}
	close(l.gate)
	wg.Wait()
	if r := <-answers; r.OK {
		ok = append(ok, r)
	}
	if len(ok) != 1 || l.runs.Load() != 1 {
		t.Fatalf("%d copies ran, the handler ran %d times", len(ok), l.runs.Load())
	}
	for i, exec := range replicas {
		if r := exec.Execute(ctx, payer, chargeCall("pay-1")); !r.OK || string(r.Data) != string(ok[0].Data) {
			t.Fatalf("replica %d, after the end: %+v, want %s", i, r, ok[0].Data)
		}
	}

	// The caller leaves mid-write; its retry goes to the other replica.
	l2 := &ledger{gate: make(chan struct{})}
	a, b := outcomeReplica(t, srv.Addr, l2), outcomeReplica(t, srv.Addr, l2)
	leaving, leave := context.WithCancel(ctx)
	first := make(chan runtime.ToolResult, 1)
	go func() { first <- a.Execute(leaving, payer, chargeCall("pay-2")) }()
	for l2.runs.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	leave()
	if r := b.Execute(ctx, payer, chargeCall("pay-2")); r.Code() != runtime.CodeCallInProgress {
		t.Fatalf("the retry while the write runs: %+v", r)
	}
	close(l2.gate)
	<-first
	r := b.Execute(ctx, payer, chargeCall("pay-2"))
	if !r.OK || string(r.Data) != `{"receipt":1}` || l2.runs.Load() != 1 {
		t.Fatalf("the retry after the write ended: %+v, the handler ran %d times", r, l2.runs.Load())
	}
}

// A Redis that does not answer refuses the write before it runs, with a
// code that says the check could not be made.
func TestAnOutcomeStoreDownRefusesWrites(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	l := &ledger{gate: make(chan struct{})}
	close(l.gate)
	exec := outcomeReplica(t, srv.Addr, l)
	srv.Pause()
	r := exec.Execute(context.Background(), payer, chargeCall("pay-3"))
	srv.Resume()
	if r.Code() != runtime.CodeIdempotencyUnchecked || r.Error.RetryAfterSeconds != 1 || l.runs.Load() != 0 {
		t.Fatalf("Redis paused: %+v, the handler ran %d times", r, l.runs.Load())
	}
	srv.Kill()
	if r := exec.Execute(context.Background(), payer, chargeCall("pay-3")); r.Code() != runtime.CodeIdempotencyUnchecked || l.runs.Load() != 0 {
		t.Fatalf("Redis gone: %+v", r)
	}
}
