package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// Thousands of calls from many goroutines, mixing valid calls, rejections,
// panics, business errors and timeouts: each gets exactly one result, its
// own, with the code its kind calls for. Run under -race in .ci/run.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel() // waits on timers
	info := func(name string, timeout time.Duration) runtime.ToolInfo {
		return runtime.ToolInfo{Name: name, Version: "1", Effect: runtime.EffectRead, Description: name,
			InputSchema: json.RawMessage(echoIn), OutputSchema: json.RawMessage(echoOut),
			Timeout: timeout, Errors: []runtime.Code{"text_not_found"}}
	}
	set := keeltest.Set{List: []*runtime.Tool{
		runtime.NewTool(info("echo", 0), runtime.Handle(okEcho)),
		runtime.NewTool(info("boom", 0), runtime.Handle(func(context.Context, echoArgs) (echoResult, error) {
			panic("boom")
		})),
		runtime.NewTool(info("fail", 0), runtime.Handle(func(context.Context, echoArgs) (echoResult, error) {
			return echoResult{}, runtime.Fail("text_not_found", "No such text.")
		})),
		runtime.NewTool(info("slow", 5*time.Millisecond), runtime.Handle(func(ctx context.Context, a echoArgs) (echoResult, error) {
			if a.Count%2 == 0 {
				time.Sleep(20 * time.Millisecond) // ignores its context
				return okEcho(ctx, a)
			}
			<-ctx.Done()
			return echoResult{}, ctx.Err()
		})),
	}}
	exec, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	type kind struct {
		name, args string
		want       runtime.Code
	}
	kinds := []kind{
		{"echo", `{"text":"hi"}`, ""},
		{"echo", `{"text":"HI"}`, runtime.CodeInvalidArguments},
		{"nope", `{"text":"hi"}`, runtime.CodeUnknownTool},
		{"boom", `{"text":"hi"}`, runtime.CodeToolInternalError},
		{"fail", `{"text":"hi"}`, "text_not_found"},
		{"slow", `{"text":"hi","count":2}`, runtime.CodeToolTimeout},
		{"slow", `{"text":"hi","count":3}`, runtime.CodeToolTimeout},
	}
	const workers, perWorker = 32, 150
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				k := kinds[(w+i)%len(kinds)]
				id := fmt.Sprintf("w%d-%d", w, i)
				r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: id, Name: k.name, Arguments: json.RawMessage(k.args)})
				if r.CallID != id || r.ToolName != k.name || r.Code() != k.want || r.OK != (k.want == "") {
					t.Errorf("call %s (%s %s): got id %s code %q ok %v", id, k.name, k.args, r.CallID, r.Code(), r.OK)
				}
				mu.Lock()
				seen[r.CallID]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != workers*perWorker {
		t.Fatalf("%d distinct results for %d calls", len(seen), workers*perWorker)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("call %s got %d results", id, n)
		}
	}
}
