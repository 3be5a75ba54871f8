package conformance_test

import (
	"context"
	"encoding/json"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/keelgen/keel/internal/testing/conformance"
	"github.com/keelgen/keel/internal/testing/conformance/generated"
	"github.com/keelgen/keel/runtime"
)

// A handler that found nothing returns nil slices and maps; the generated
// writer writes them as json v2 does ([] and {}, "" for []byte, an
// omitempty or omitzero member left out), and the output schema, which
// requires the arrays and objects, accepts that.
func TestNilCollectionsAreWrittenAsJSONv2Does(t *testing.T) {
	exec, err := generated.NewExecutor()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{``, `{}`, `{"pods":2}`} {
		r := exec.Execute(context.Background(), runtime.ExecutionContext{},
			runtime.ToolCall{ID: "n", Name: generated.ToolInventory, Arguments: json.RawMessage(args)})
		if !r.OK {
			t.Fatalf("arguments %q: %s %s", args, r.Code(), r.Error.Message)
		}
		var in conformance.InventoryArgs
		if args != "" {
			if err := jsonv2.Unmarshal([]byte(args), &in); err != nil {
				t.Fatal(err)
			}
		}
		v, _ := conformance.ListInventory(context.Background(), in)
		want, err := jsonv2.Marshal(v, jsonv2.Deterministic(true))
		if err != nil {
			t.Fatal(err)
		}
		if string(r.Data) != string(want) {
			t.Errorf("arguments %q:\n got %s\nwant %s (json v2)", args, r.Data, want)
		}
	}
	r := exec.Execute(context.Background(), runtime.ExecutionContext{},
		runtime.ToolCall{ID: "n", Name: generated.ToolInventory, Arguments: json.RawMessage(`{"pods":1}`)})
	if want := `{"pods":[{"name":"pod-a","labels":{},"ports":[]}],"labels":{},"digest":""}`; string(r.Data) != want {
		t.Errorf("one pod: got %s, want %s", r.Data, want)
	}
}
