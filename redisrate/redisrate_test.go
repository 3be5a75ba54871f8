package redisrate_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/redisrate"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// replica is one harness process: its own executor and its own client of
// the shared Redis, every caller limited to 10 calls a minute.
func replica(t *testing.T, addr string, timeout time.Duration, ran *atomic.Int32) *runtime.Executor {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	lim, err := redisrate.New(client, redisrate.Options{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	tool := runtime.NewTool(runtime.ToolInfo{Name: "lookup", Version: "1", Effect: runtime.EffectRead, Description: "lookup",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct{}) (struct{}, error) { ran.Add(1); return struct{}{}, nil }))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithRateLimits(runtime.RateLimits{Limiter: lim, PerCaller: runtime.RateLimit{Calls: 10, Per: time.Minute}}))
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

var lookup = runtime.ToolCall{ID: "c", Name: "lookup", Arguments: json.RawMessage(`{}`)}

// Two replicas sharing one Redis hold one caller to its limit together: of
// 40 concurrent calls, half on each, exactly 10 run; another caller has a
// bucket of its own, and the refused are told when to try again.
func TestTwoReplicasShareALimit(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var ran atomic.Int32
	a, b := replica(t, srv.Addr, time.Second, &ran), replica(t, srv.Addr, time.Second, &ran)
	ann := runtime.ExecutionContext{Tenant: "acme", Principal: "ann"}
	var ok, limited atomic.Int32
	var wg sync.WaitGroup
	for i := range 40 {
		exec := a
		if i%2 == 1 {
			exec = b
		}
		wg.Go(func() {
			switch r := exec.Execute(context.Background(), ann, lookup); {
			case r.OK:
				ok.Add(1)
			case r.Code() == runtime.CodeRateLimitExceeded && strings.Contains(r.Error.Message, "try again in"):
				limited.Add(1)
			default:
				t.Errorf("unexpected result %+v", r.Error)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 10 || limited.Load() != 30 || ran.Load() != 10 {
		t.Fatalf("%d ran, %d limited, handlers %d; want 10, 30 and 10", ok.Load(), limited.Load(), ran.Load())
	}
	if r := b.Execute(context.Background(), runtime.ExecutionContext{Tenant: "acme", Principal: "bob"}, lookup); !r.OK {
		t.Errorf("bob shares ann's bucket: %+v", r.Error)
	}
}

// A Redis that is down, or that never answers, refuses the call within the
// limiter's timeout: nothing runs.
func TestLimiterThatCannotDecideRefuses(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var ran atomic.Int32
	exec := replica(t, srv.Addr, 200*time.Millisecond, &ran)
	ann := runtime.ExecutionContext{Principal: "ann"}
	// With Redis up the call runs. Its first take dials and loads the
	// script, which on a loaded machine (CI's race passes, two at once) can
	// outlast the 200 ms timeout: such a try is refused and runs nothing,
	// so the call is sent until one is taken, within 10 s.
	r := exec.Execute(context.Background(), ann, lookup)
	for deadline := time.Now().Add(10 * time.Second); !r.OK && r.Code() == runtime.CodeRateLimitExceeded && r.Error.LimitUnchecked && time.Now().Before(deadline); {
		r = exec.Execute(context.Background(), ann, lookup)
	}
	if !r.OK {
		t.Fatalf("with Redis up: %+v", r.Error)
	}
	srv.Pause()
	start := time.Now()
	r = exec.Execute(context.Background(), ann, lookup)
	srv.Resume()
	if r.Code() != runtime.CodeRateLimitExceeded || time.Since(start) > 5*time.Second {
		t.Errorf("with Redis paused: %+v after %v", r.Error, time.Since(start))
	}
	srv.Kill()
	if r := exec.Execute(context.Background(), ann, lookup); r.Code() != runtime.CodeRateLimitExceeded {
		t.Errorf("with Redis down: %+v", r.Error)
	}
	if ran.Load() != 1 {
		t.Errorf("the handler ran %d times, want 1", ran.Load())
	}
	// A server that answers garbage (not Redis) is refused too, not a crash.
	garbage := replica(t, redistest.Impostor(t, []byte("*4\r\n:1\r\n:0\r\n$1\r\nx\r\n$1\r\ny\r\n")), 500*time.Millisecond, &ran)
	if r := garbage.Execute(context.Background(), ann, lookup); r.Code() != runtime.CodeRateLimitExceeded {
		t.Errorf("a server that answers garbage: %+v", r.Error)
	}
}

func TestNewRefusesNil(t *testing.T) {
	if _, err := redisrate.New(nil, redisrate.Options{}); err == nil {
		t.Error("a nil client")
	}
	if _, err := redisrate.New(redis.NewClient(&redis.Options{}), redisrate.Options{Timeout: -1}); err == nil {
		t.Error("a negative timeout")
	}
}
