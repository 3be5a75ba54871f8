// Package keelotel traces and measures keel tool calls with OpenTelemetry:
// a span per call, with the stage timings and the result code as
// attributes and the call_id joined to the trace, and metrics for calls by
// tool and code and a latency histogram. Add it with
// runtime.WithObserver(keelotel.New(tp, mp)).
//
// What it costs, measured (docs/performance.md, BenchmarkExecute in
// ./example): on a no-op provider, a span that does not record builds no
// attributes, reads no stage times and no argument digest, and the
// metrics' attribute sets are built once per tool and code: a traced call
// then costs 1.24x the same call untraced with one processor, 1.46x with
// two (where an observer's work also keeps the scheduler waking the idle
// processor). A span that records, with the SDK exporting nowhere, costs
// 3.0x to 5.4x.
package keelotel

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"

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
	// labels holds each (tool, code) pair's metric options, built once and
	// read without a lock: both are bounded (the set's tools and "unknown";
	// the executor's and the tools' declared codes), and an attribute set
	// costs a sort and an allocation to build.
	labels   atomic.Pointer[map[labelKey]labels]
	labelsMu sync.Mutex // serializes additions to labels
}

// labels is the options a call's two measurements take.
type labels struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

type labelKey struct{ tool, code string }

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

// Begin starts the call's span; the handler's spans nest under it. The
// span's attributes are set at its end, and only when it records.
func (o *Observer) Begin(ctx context.Context, _ runtime.ToolCall) context.Context {
	ctx, _ = o.tracer.Start(ctx, "execute_tool")
	return ctx
}

// TimesStages: the stages are span attributes, set only on a span that
// records.
func (o *Observer) TimesStages(ctx context.Context) bool {
	return trace.SpanFromContext(ctx).IsRecording()
}

// End records the call's metrics and ends its span.
func (o *Observer) End(ctx context.Context, r *runtime.CallRecord) {
	span := trace.SpanFromContext(ctx) // the one Begin started
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
	l := o.labelsFor(tool, code)
	o.calls.Add(ctx, 1, l.add...)
	o.duration.Record(ctx, r.Duration.Seconds(), l.record...)
	if !span.IsRecording() { // no SDK, or not sampled: build nothing
		span.End()
		return
	}
	span.SetName("execute_tool " + tool)
	ms := func(d interface{ Seconds() float64 }) float64 { return d.Seconds() * 1000 }
	span.SetAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.call.id", r.CallID),
		attribute.String("gen_ai.tool.name", tool),
		attribute.String("keel.tool.version", r.Version),
		attribute.String("keel.set_digest", r.SetDigest),
		attribute.String("keel.tenant", r.Tenant),
		attribute.String("keel.principal", r.Principal),
		attribute.String("keel.arguments_digest", r.ArgumentsDigest()),
		attribute.String("keel.decision", r.Decision),
		attribute.String("keel.result.code", code),
		attribute.Float64("keel.stage.decode_ms", ms(r.Stages.Decode)),
		attribute.Float64("keel.stage.validate_ms", ms(r.Stages.Validate)),
		attribute.Float64("keel.stage.policy_ms", ms(r.Stages.Policy)),
		attribute.Float64("keel.stage.handler_ms", ms(r.Stages.Handler)),
		attribute.Float64("keel.stage.output_ms", ms(r.Stages.Output)),
	)
	if r.Refusal != "" { // a message a door refused before the order read a call
		span.SetAttributes(attribute.String("keel.refusal", r.Refusal))
	}
	if len(r.Untrusted) > 0 { // the result carried text from outside: its conversation is tainted
		span.SetAttributes(attribute.StringSlice("keel.untrusted", r.Untrusted))
	}
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

// labelsFor is the metric options of one tool and code.
func (o *Observer) labelsFor(tool, code string) labels {
	key := labelKey{tool, code}
	if m := o.labels.Load(); m != nil {
		if l, ok := (*m)[key]; ok {
			return l
		}
	}
	o.labelsMu.Lock()
	defer o.labelsMu.Unlock()
	old := o.labels.Load()
	if old != nil {
		if l, ok := (*old)[key]; ok {
			return l
		}
	}
	set := metric.WithAttributeSet(attribute.NewSet(attribute.String("gen_ai.tool.name", tool), attribute.String("keel.result.code", code)))
	l := labels{add: []metric.AddOption{set}, record: []metric.RecordOption{set}}
	m := make(map[labelKey]labels, 1)
	if old != nil {
		maps.Copy(m, *old)
	}
	m[key] = l
	o.labels.Store(&m)
	return l
}
