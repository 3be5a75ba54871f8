package example_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/keelgen/keel/example"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

// The four story calls through the executor, and beside them the floor: the
// same valid call with no checks at all (decode the arguments, call the
// handler, encode the result), with the same JSON library. Compare ns/op of
// each call with BenchmarkFloor in the same run.
var benchCalls = []runtime.ToolCall{
	{ID: "call-valid", Name: "lookup_incident", Arguments: json.RawMessage(`{"incident_id": "INC-001"}`)},
	{ID: "call-unknown", Name: "delete_prod", Arguments: json.RawMessage(`{"target": "db-main"}`)},
	{ID: "call-invalid", Name: "lookup_incident", Arguments: json.RawMessage(`{"incident_id": 42}`)},
	{ID: "call-write", Name: "create_ticket", Arguments: json.RawMessage(`{"incident_id": "INC-001", "summary": "Raise the auth-api database pool size"}`)},
}

func BenchmarkExecute(b *testing.B) {
	e, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range benchCalls {
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
	args := benchCalls[0].Arguments
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
