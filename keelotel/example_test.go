package keelotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/keelotel"
	"github.com/keelgen/keel/runtime"
)

// A span per call, joined to the caller's trace, with the result code as
// an attribute. Here the spans go to a recorder; in a deployment, to the
// SDK's exporter.
func Example() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	mp := sdkmetric.NewMeterProvider()
	obs, err := keelotel.New(tp, mp)
	if err != nil {
		panic(err)
	}
	exec, err := generated.NewExecutor(runtime.WithObserver(obs), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	ctx, turn := tp.Tracer("agent").Start(context.Background(), "agent turn")
	exec.Execute(ctx, runtime.ExecutionContext{}, runtime.ToolCall{ID: "call-1", Name: generated.ToolLookupIncident,
		Arguments: json.RawMessage(`{"incident_id":"INC-001"}`)})
	turn.End()

	call := spans.Ended()[0]
	for _, kv := range call.Attributes() {
		if kv.Key == "keel.result.code" {
			fmt.Println(call.Name(), kv.Value.AsString(), call.Parent().SpanID() == turn.SpanContext().SpanID())
		}
	}
	// Output:
	// execute_tool lookup_incident ok true
}
