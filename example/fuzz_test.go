package example_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/keelgen/keel/example"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/internal/testing/leakcheck"
	"github.com/keelgen/keel/internal/toolrules"
	"github.com/keelgen/keel/runtime"
)

// observedSet is the generated tool set with the same contracts, whose
// handlers call the real ones and record that they ran and what they got.
type observedSet struct {
	tools      []*runtime.Tool
	readCalls  atomic.Int32
	writeCalls atomic.Int32
	mu         sync.Mutex
	lastArgs   any // the typed value the last handler received
}

func (s *observedSet) Lookup(name string) *runtime.Tool {
	for _, t := range s.tools {
		if t.Info().Name == name {
			return t
		}
	}
	return nil
}

func (s *observedSet) Tools() []*runtime.Tool { return s.tools }

// Lock is the generated lock: the observed tools hold the same contracts, so
// the executor verifies it at start like the generated set's.
func (s *observedSet) Lock() ([]byte, []byte) { return generated.ToolSet().Lock() }

func (s *observedSet) record(args any) {
	s.mu.Lock()
	s.lastArgs = args
	s.mu.Unlock()
}

func newObservedSet(t testing.TB) (*observedSet, *runtime.Executor) {
	s := &observedSet{}
	lookup := generated.ToolSet().Lookup(generated.ToolLookupIncident).Info()
	create := generated.ToolSet().Lookup(generated.ToolCreateTicket).Info()
	s.tools = []*runtime.Tool{
		runtime.NewTool(create, runtime.Handle(func(ctx context.Context, a generated.CreateTicketArgs) (example.Ticket, error) {
			s.writeCalls.Add(1)
			s.record(a)
			return example.CreateTicket(ctx, a.IncidentID, a.Summary)
		})),
		runtime.NewTool(lookup, runtime.Handle(func(ctx context.Context, a example.LookupIncidentArgs) (example.Incident, error) {
			s.readCalls.Add(1)
			s.record(a)
			return example.LookupIncident(ctx, a)
		})),
	}
	exec, err := runtime.NewExecutor(s, runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return s, exec
}

// fuzzSeeds are the hostile catalog's argument shapes, against the example's
// own members.
var fuzzSeeds = []string{
	`{"incident_id":"INC-001"}`, `{"incident_id":"INC-404"}`, `{"incident_id":"INC-001","summary":"raise pool size"}`,
	``, `null`, `[]`, `"x"`, `1`, `true`, " \t", `{}`, `{} {}`, `{}x`, `{"incident_id":"INC-001",}`,
	`{"incident_id":"INC-001","incident_id":"INC-002"}`, `{"incident_\u0069d":"a","incident_id":"b"}`,
	`{"INCIDENT_ID":"INC-001"}`, `{"incident_id":"INC-001","ſummary":"x"}`, `{"incident_id":"INC-001","\u212a":1}`,
	"{\"incident_id\":\"INC-001\xff\"}", `{"incident_id":"INC-001\ud800"}`, "\xef\xbb\xbf{\"incident_id\":\"INC-001\"}",
	`{"incident_id":"INC-001","summary":1.5}`, `{"incident_id":"INC-001","summary":1e400}`, `{"incident_id":null}`,
	`{"incident_id":"INC-0001","summary":"\u00e9\u0000\n"}`, `{"incident_id":"INC-001","summary":"` + strings.Repeat("[", 70) + `"}`,
}

var fuzzNames = []string{
	generated.ToolLookupIncident, generated.ToolCreateTicket, "Lookup_Incident", "lookup_incident ", "lookup_incident\x00",
	"lookup_іncident", "", "LookupIncident", "CreateTicket", "delete_prod",
}

// businessMessages are the example handlers' messages, as the contract allows.
var businessMessages = []string{
	"No incident has this id. Check the id or ask the user for it.",
	"No incident has this id; a ticket needs an existing incident.",
}

// FuzzExecute drives the generated tool set with any name and any argument
// bytes, without approval. Invariants: no panic; the code is in the closed
// set of executor codes and declared codes; no message leaks; the write
// tool's handler never runs (it would return a ticket or its business
// error); tool_version is null exactly for unknown tools.
func FuzzExecute(f *testing.F) {
	for i, args := range fuzzSeeds {
		f.Add(fuzzNames[i%len(fuzzNames)], []byte(args))
		f.Add(generated.ToolCreateTicket, []byte(args))
	}
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		f.Fatal(err)
	}
	unknown := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{Name: "?"}).Error.Message
	allowed := append([]string{unknown}, businessMessages...)
	codes := append(slices.Clone(toolrules.ExecutorCodes), "incident_not_found")
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "f", Name: name, Arguments: args})
		if !r.OK && !slices.Contains(codes, string(r.Code())) {
			t.Fatalf("code %q outside the closed set", r.Code())
		}
		if r.OK == (r.Error != nil) || (r.OK && r.Data == nil) || (!r.OK && r.Data != nil) {
			t.Fatalf("inconsistent result %+v", r)
		}
		if (r.ToolVersion == nil) != (r.Code() == runtime.CodeUnknownTool) {
			t.Fatalf("tool_version %v with code %q", r.ToolVersion, r.Code())
		}
		if err := leakcheck.Check(r, allowed...); err != nil {
			t.Fatal(err)
		}
		if name == generated.ToolCreateTicket && (r.OK || r.Code() == "incident_not_found") {
			t.Fatalf("the write tool's handler ran without approval: %+v", r)
		}
	})
}

// FuzzHandlerSeesWhatValidatorSaw is the differential test of a hand-bound
// tool set (runtime.Handle: validator, then json v2): whenever a handler
// runs, the typed value it received, encoded again, equals the JSON value
// the schema validator accepted (same members, same strings, numbers equal
// exactly). The generated path has its own, in internal/testing/conformance.
func FuzzHandlerSeesWhatValidatorSaw(f *testing.F) {
	for _, args := range fuzzSeeds {
		f.Add(false, []byte(args))
		f.Add(true, []byte(args))
	}
	set, exec := newObservedSet(f)
	f.Fuzz(func(t *testing.T, write bool, args []byte) {
		name := generated.ToolLookupIncident
		if write {
			name = generated.ToolCreateTicket
		}
		before := set.readCalls.Load() + set.writeCalls.Load()
		set.record(nil)
		exec.Execute(context.Background(), runtime.ExecutionContext{AllowSideEffects: true}, runtime.ToolCall{ID: "d", Name: name, Arguments: args})
		if set.readCalls.Load()+set.writeCalls.Load() == before {
			return // rejected before the handler: nothing to compare
		}
		validated, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
		if err != nil {
			t.Fatalf("the handler ran on arguments that are not JSON: %v", err)
		}
		set.mu.Lock()
		typed := set.lastArgs
		set.mu.Unlock()
		enc, err := jsonv2.Marshal(typed)
		if err != nil {
			t.Fatal(err)
		}
		received, err := jsonschema.UnmarshalJSON(bytes.NewReader(enc))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(validated, received) {
			t.Fatalf("validator saw %#v, handler got %#v", validated, received)
		}
	})
}

// The seeds alone already exercise both outcomes of the differential test.
func TestFuzzSeedsReachHandlers(t *testing.T) {
	set, exec := newObservedSet(t)
	for _, args := range fuzzSeeds {
		exec.Execute(context.Background(), runtime.ExecutionContext{AllowSideEffects: true}, runtime.ToolCall{Name: generated.ToolCreateTicket, Arguments: json.RawMessage(args)})
		exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{Name: generated.ToolLookupIncident, Arguments: json.RawMessage(args)})
	}
	if set.readCalls.Load() == 0 || set.writeCalls.Load() == 0 {
		t.Fatalf("seeds reached the read handler %d times and the write handler %d times", set.readCalls.Load(), set.writeCalls.Load())
	}
}
