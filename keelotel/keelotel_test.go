package keelotel_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/keelotel"
	"github.com/keelgen/keel/runtime"
)

func TestSpansAndMetricsForEachCode(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	obs, err := keelotel.New(tp, mp)
	if err != nil {
		t.Fatal(err)
	}
	exec, err := generated.NewExecutor(runtime.WithObserver(obs), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	// A parent span: the call's span joins the caller's trace.
	ctx, parent := tp.Tracer("test").Start(context.Background(), "agent turn")
	calls := []struct {
		id, name, args string
		code           string
	}{
		{"c-ok", generated.ToolLookupIncident, `{"incident_id":"INC-001"}`, "ok"},
		{"c-unknown", "delete_prod", `{}`, "unknown_tool"},
		{"c-invalid", generated.ToolLookupIncident, `{"incident_id":42}`, "invalid_arguments"},
		{"c-write", generated.ToolCreateTicket, `{"incident_id":"INC-001","summary":"s"}`, "approval_required"},
		{"c-biz", generated.ToolLookupIncident, `{"incident_id":"INC-404"}`, "incident_not_found"},
	}
	retry := &runtime.Attempt{Engine: "temporal", WorkflowID: "wf-1", RunID: "run-1", ActivityID: "5", Number: 2}
	for i, c := range calls {
		ec := runtime.ExecutionContext{Tenant: "acme"}
		if i == 0 {
			ec.Attempt = retry
		}
		exec.Execute(ctx, ec, runtime.ToolCall{ID: c.id, Name: c.name, Arguments: json.RawMessage(c.args)})
	}
	parent.End()

	ended := spans.Ended()
	if len(ended) != len(calls)+1 {
		t.Fatalf("%d spans for %d calls", len(ended), len(calls))
	}
	for i, c := range calls {
		s := ended[i]
		attrs := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			attrs[kv.Key] = kv.Value
		}
		if attrs["gen_ai.tool.call.id"].AsString() != c.id || attrs["keel.result.code"].AsString() != c.code {
			t.Errorf("span %d: %v", i, s.Attributes())
		}
		durable := attrs["keel.durable.workflow_id"].AsString() == retry.WorkflowID && attrs["keel.durable.run_id"].AsString() == retry.RunID &&
			attrs["keel.durable.activity_id"].AsString() == retry.ActivityID && attrs["keel.durable.attempt"].AsInt64() == 2 &&
			attrs["keel.durable.engine"].AsString() == "temporal"
		if _, any := attrs["keel.durable.engine"]; durable != (i == 0) || any != (i == 0) {
			t.Errorf("span %d: the durable attempt's attributes %v", i, s.Attributes())
		}
		if s.Parent().TraceID() != parent.SpanContext().TraceID() || s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("span %s is not in the caller's trace", s.Name())
		}
		for _, k := range []attribute.Key{"keel.stage.decode_ms", "keel.stage.validate_ms", "keel.stage.policy_ms", "keel.stage.handler_ms", "keel.stage.output_ms"} {
			if _, ok := attrs[k]; !ok {
				t.Errorf("span %s lacks %s", s.Name(), k)
			}
		}
		wantName := "execute_tool " + c.name
		if c.code == "unknown_tool" {
			wantName = "execute_tool unknown"
		}
		if s.Name() != wantName {
			t.Errorf("span name %q, want %q", s.Name(), wantName)
		}
		if c.code == "ok" && attrs["keel.stage.handler_ms"].AsFloat64() <= 0 {
			t.Errorf("a successful call spent no time in its handler: %v", attrs)
		}
	}
	if !ended[0].SpanContext().IsValid() || ended[0].SpanKind() != trace.SpanKindInternal {
		t.Errorf("span kind %v", ended[0].SpanKind())
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	var histCount uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range data.DataPoints {
					tool, _ := dp.Attributes.Value("gen_ai.tool.name")
					code, _ := dp.Attributes.Value("keel.result.code")
					counts[tool.AsString()+"/"+code.AsString()] += dp.Value
				}
			case metricdata.Histogram[float64]:
				for _, dp := range data.DataPoints {
					histCount += dp.Count
				}
			}
		}
	}
	want := map[string]int64{"lookup_incident/ok": 1, "unknown/unknown_tool": 1, "lookup_incident/invalid_arguments": 1,
		"create_ticket/approval_required": 1, "lookup_incident/incident_not_found": 1}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("calls %s = %d, want %d (all: %v)", k, counts[k], v, counts)
		}
	}
	if histCount != uint64(len(calls)) {
		t.Errorf("latency histogram has %d points", histCount)
	}
}

// BenchmarkObserver: the valid call with no observer, and with keelotel on
// the global (no-op) providers, in the same run.
func BenchmarkObserver(b *testing.B) {
	noop, err := keelotel.New(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	call := runtime.ToolCall{ID: "b", Name: generated.ToolLookupIncident, Arguments: json.RawMessage(`{"incident_id":"INC-001"}`)}
	for _, c := range []struct {
		name string
		opts []runtime.Option
	}{{"none", nil}, {"otel-noop", []runtime.Option{runtime.WithObserver(noop)}}} {
		exec, err := generated.NewExecutor(append(c.opts, runtime.WithLogger(slog.New(slog.DiscardHandler)))...)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !exec.Execute(context.Background(), runtime.ExecutionContext{}, call).OK {
					b.Fatal("failed")
				}
			}
		})
	}
}

// A message a door refused (runtime.Executor.Refused) is a span too, with
// its refusal, and counts under its code.
func TestRefusedMessageSpan(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	obs, err := keelotel.New(tp, sdkmetric.NewMeterProvider())
	if err != nil {
		t.Fatal(err)
	}
	exec, err := generated.NewExecutor(runtime.WithObserver(obs), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	exec.Refused(context.Background(), runtime.ExecutionContext{Tenant: "acme"}, runtime.ToolCall{ID: "c-batch"}, runtime.RefusedBatch)
	ended := spans.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans", len(ended))
	}
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range ended[0].Attributes() {
		attrs[kv.Key] = kv.Value
	}
	if attrs["keel.result.code"].AsString() != "refused_message" || attrs["keel.refusal"].AsString() != "batch" || attrs["gen_ai.tool.call.id"].AsString() != "c-batch" {
		t.Errorf("the refused message's span: %v", ended[0].Attributes())
	}
}
