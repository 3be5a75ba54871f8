package example_test

import (
	"context"
	"io"
	"log/slog"
	goruntime "runtime"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	nooptrace "go.opentelemetry.io/otel/trace/noop"

	"github.com/keelgen/keel/example"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/keelotel"
	"github.com/keelgen/keel/runtime"
)

// BenchmarkExecute sends the four story calls through the executor, then the
// valid call again as deployments run it: with the audit log (to a
// discarding handler, and as JSON text written nowhere), and traced by keelotel on a no-op provider and on a
// recording one (the SDK, sampling every span, exporting nowhere). Compare
// each with BenchmarkFloorInGoroutine in the same run.
func BenchmarkExecute(b *testing.B) {
	discard := runtime.WithLogger(slog.New(slog.DiscardHandler))
	e, err := generated.NewExecutor(discard)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	calls := example.StoryCalls()
	for _, c := range calls {
		b.Run(c.ID, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := e.Execute(ctx, runtime.ExecutionContext{}, c); r.CallID != c.ID {
					b.Fatal(r)
				}
			}
		})
	}
	noop, err := keelotel.New(nooptrace.NewTracerProvider(), noopmetric.NewMeterProvider())
	if err != nil {
		b.Fatal(err)
	}
	recording, err := keelotel.New(sdktrace.NewTracerProvider(), sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
	if err != nil {
		b.Fatal(err)
	}
	valid := calls[0]
	for _, o := range []struct {
		name     string
		observer runtime.Observer
	}{
		{"call-valid-audited", runtime.AuditLog(slog.New(slog.DiscardHandler))},
		{"call-valid-audited-json", runtime.AuditLog(slog.New(slog.NewJSONHandler(io.Discard, nil)))},
		{"call-valid-traced", noop},
		{"call-valid-traced-recording", recording},
	} {
		e, err := generated.NewExecutor(discard, runtime.WithObserver(o.observer))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(o.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := e.Execute(ctx, runtime.ExecutionContext{Tenant: "acme", Principal: "agent-7"}, valid); !r.OK {
					b.Fatal(r)
				}
			}
		})
	}
}

// BenchmarkFloor is the valid call with no checks at all: decode the
// arguments, call the handler, encode the result, with the same JSON library.
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

// BenchmarkFloorInGoroutine is the floor of keel's promise: BenchmarkFloor
// with the handler on a goroutine of its own and a channel back, so that a
// handler that ignores its context still yields at its deadline. Any
// executor that keeps that promise pays this; keel's figures are ratios to
// it. It does the least such an executor can: one allocation holds the
// run, the timer is reused and armed only for a handler still running
// after one yield, and the handler gets no context of its own.
func BenchmarkFloorInGoroutine(b *testing.B) {
	args := example.StoryCalls()[0].Arguments
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	b.ReportAllocs()
	for b.Loop() {
		r := &floorRun{done: make(chan struct{}, 1)}
		if err := jsonv2.Unmarshal(args, &r.args); err != nil {
			b.Fatal(err)
		}
		go r.run()
		goruntime.Gosched()
		select {
		case <-r.done:
		default:
			timer.Reset(2 * time.Second)
			select {
			case <-r.done:
			case <-timer.C:
				b.Fatal("the handler missed its deadline")
			}
			timer.Stop()
		}
		if r.err != nil {
			b.Fatal(r.err)
		}
		if _, err := jsonv2.Marshal(r.inc); err != nil {
			b.Fatal(err)
		}
	}
}

// floorRun is one call of BenchmarkFloorInGoroutine.
type floorRun struct {
	args example.LookupIncidentArgs
	inc  example.Incident
	err  error
	done chan struct{}
}

func (r *floorRun) run() {
	r.inc, r.err = example.LookupIncident(context.Background(), r.args)
	r.done <- struct{}{}
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
