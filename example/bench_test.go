package example_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/keelgen/keel/example"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

// BenchmarkExecute sends the four story calls through the executor. Compare
// each with BenchmarkFloor in the same run: the same valid call with no checks
// at all (decode the arguments, call the handler, encode the result), with
// the same JSON library.
func BenchmarkExecute(b *testing.B) {
	e, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range example.StoryCalls() {
		b.Run(c.ID, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := e.Execute(ctx, runtime.ExecutionContext{}, c); r.CallID != c.ID {
					b.Fatal(r)
				}
			}
		})
	}
}

func BenchmarkFloor(b *testing.B) {
	ctx := context.Background()
	args := example.StoryCalls()[0].Arguments
	b.ReportAllocs()
	for b.Loop() {
		var a example.LookupIncidentArgs
		if err := jsonv2.Unmarshal(args, &a); err != nil {
			b.Fatal(err)
		}
		inc, err := example.LookupIncident(ctx, a)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := jsonv2.Marshal(inc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFloorUnderDeadline is the floor's work with the handler in its
// own goroutine under a deadline, as any executor must run a handler that
// may ignore its context. BenchmarkExecute/call-valid minus this is what
// the checks cost; this minus BenchmarkFloor is what the deadline costs.
func BenchmarkFloorUnderDeadline(b *testing.B) {
	args := example.StoryCalls()[0].Arguments
	b.ReportAllocs()
	for b.Loop() {
		var a example.LookupIncidentArgs
		if err := jsonv2.Unmarshal(args, &a); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		done := make(chan error, 1)
		var inc example.Incident
		go func() {
			var err error
			inc, err = example.LookupIncident(ctx, a)
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				b.Fatal(err)
			}
		case <-ctx.Done():
			b.Fatal(ctx.Err())
		}
		cancel()
		if _, err := jsonv2.Marshal(inc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewExecutor is the start-up cost after the first: verifying the
// embedded lock against every contract (schemas compile once per process).
func BenchmarkNewExecutor(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler))); err != nil {
			b.Fatal(err)
		}
	}
}
