// Package keelotel traces and measures keel tool calls with OpenTelemetry:
// a span per call, with the stage timings and the result code as
// attributes and the call_id joined to the trace, and metrics for calls by
// tool and code and a latency histogram. Add it with
// runtime.WithObserver(keelotel.New(tp, mp)); with no SDK provider
// configured the global providers are no-ops, and so is the cost.
package keelotel

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/keelgen/keel/runtime"
)

const scope = "github.com/keelgen/keel/keelotel"

// Observer is a runtime.Observer that records spans and metrics.
type Observer struct {
	tracer   trace.Tracer
	calls    metric.Int64Counter
	duration metric.Float64Histogram
}

// New returns an observer using tp and mp; nil means the global providers
// (otel.GetTracerProvider, otel.GetMeterProvider).
func New(tp trace.TracerProvider, mp metric.MeterProvider) (*Observer, error) {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(scope)
	calls, err := meter.Int64Counter("keel.tool.calls", metric.WithDescription("Tool calls, by tool and result code."), metric.WithUnit("{call}"))
	if err != nil {
		return nil, err
	}
	duration, err := meter.Float64Histogram("keel.tool.duration", metric.WithDescription("Tool call latency, by tool and result code."), metric.WithUnit("s"))
	if err != nil {
		return nil, err
	}
	return &Observer{tracer: tp.Tracer(scope), calls: calls, duration: duration}, nil
}

// Begin starts the call's span; the handler's spans nest under it.
func (o *Observer) Begin(ctx context.Context, call runtime.ToolCall) (context.Context, func(*runtime.CallRecord)) {
	ctx, span := o.tracer.Start(ctx, "execute_tool", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.call.id", call.ID),
	))
	return ctx, func(r *runtime.CallRecord) {
		// An unknown name is the model's: keep it out of span names and metric
		// labels, where it would be unbounded.
		tool := r.Tool
		if r.Version == "" {
			tool = "unknown"
		}
		code := string(r.Code)
		if r.OK {
			code = "ok"
		}
		labels := metric.WithAttributes(attribute.String("gen_ai.tool.name", tool), attribute.String("keel.result.code", code))
		o.calls.Add(ctx, 1, labels)
		o.duration.Record(ctx, r.Duration.Seconds(), labels)
		if !span.IsRecording() { // no SDK, or not sampled: build nothing
			span.End()
			return
		}
		span.SetName("execute_tool " + tool)
		ms := func(d interface{ Seconds() float64 }) float64 { return d.Seconds() * 1000 }
		span.SetAttributes(
			attribute.String("gen_ai.tool.name", tool),
			attribute.String("keel.tool.version", r.Version),
			attribute.String("keel.set_digest", r.SetDigest),
			attribute.String("keel.tenant", r.Tenant),
			attribute.String("keel.principal", r.Principal),
			attribute.String("keel.arguments_digest", r.ArgumentsDigest),
			attribute.String("keel.decision", r.Decision),
			attribute.String("keel.result.code", code),
			attribute.Float64("keel.stage.decode_ms", ms(r.Stages.Decode)),
			attribute.Float64("keel.stage.validate_ms", ms(r.Stages.Validate)),
			attribute.Float64("keel.stage.policy_ms", ms(r.Stages.Policy)),
			attribute.Float64("keel.stage.handler_ms", ms(r.Stages.Handler)),
			attribute.Float64("keel.stage.output_ms", ms(r.Stages.Output)),
		)
		if a := r.Attempt; a.Engine != "" { // a durable engine's try: follow the call across retries and workers
			span.SetAttributes(
				attribute.String("keel.durable.engine", a.Engine),
				attribute.String("keel.durable.workflow_id", a.WorkflowID),
				attribute.String("keel.durable.run_id", a.RunID),
				attribute.String("keel.durable.activity_id", a.ActivityID),
				attribute.Int("keel.durable.attempt", a.Number),
			)
		}
		if !r.OK {
			span.SetStatus(codes.Error, code)
		}
		span.End()
	}
}
