package conformance_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/keelgen/keel/internal/testing/conformance/generated"
	"github.com/keelgen/keel/runtime"
)

// Many goroutines through the generated readers and writers at once (their
// decoders, encoders and timers are pooled): every call gets its own result,
// byte for byte what it gets alone. Run under -race in .ci/run.
func TestConcurrentGeneratedCalls(t *testing.T) {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	var calls []runtime.ToolCall
	for i := range 40 {
		calls = append(calls,
			runtime.ToolCall{ID: fmt.Sprint("s", i), Name: generated.ToolStrings, Arguments: fmt.Appendf(nil, `{"code":"c%d","color":"red"}`, i%1000)},
			runtime.ToolCall{ID: fmt.Sprint("n", i), Name: generated.ToolNumbers, Arguments: fmt.Appendf(nil, `{"ratio":0.%d,"count":%d}`, i+1, i%10+1)},
			runtime.ToolCall{ID: fmt.Sprint("c", i), Name: generated.ToolCollections, Arguments: fmt.Appendf(nil, `{"tags":["t%d"],"labels":{"k":"v%d"}}`, i, i)},
			runtime.ToolCall{ID: fmt.Sprint("x", i), Name: generated.ToolNumbers, Arguments: fmt.Appendf(nil, `{"ratio":%d}`, i+1)}, // refused
		)
	}
	want := make([]runtime.ToolResult, len(calls))
	for i, c := range calls {
		want[i] = exec.Execute(context.Background(), runtime.ExecutionContext{}, c)
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(calls)*8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 5 {
				for j := range calls {
					i := (j + g*7 + k) % len(calls)
					r := exec.Execute(context.Background(), runtime.ExecutionContext{}, calls[i])
					if r.CallID != want[i].CallID || r.Code() != want[i].Code() || !bytes.Equal(r.Data, want[i].Data) {
						errs <- fmt.Sprintf("%s: got %s %s, alone %s %s", calls[i].ID, r.Code(), r.Data, want[i].Code(), want[i].Data)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if !want[0].OK || want[3].Code() != runtime.CodeInvalidArguments {
		t.Fatalf("the mix lacks a valid or a refused call: %+v / %+v", want[0].Error, want[3].Error)
	}
}
