package runtime_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
	"github.com/keelgen/keel/runtime/wire"
)

// seats reads {"seats": integer 1..10} as generated code does, and answers
// with the number it read.
type seats struct{}

type seatsCall struct{ n int64 }

func (seats) Read(d *wire.Decoder) (wire.Call, error) {
	if err := d.ObjectStart(); err != nil {
		return nil, err
	}
	c := &seatsCall{}
	seen := false
	for d.More() {
		name, err := d.Name()
		if err != nil {
			return nil, err
		}
		if string(name) != "seats" || seen {
			return nil, wire.Unknown()
		}
		seen = true
		if c.n, err = d.Int(64); err != nil {
			return nil, wire.At(err, "seats")
		}
		if c.n < 1 || c.n > 10 {
			return nil, wire.At(wire.Fail("maximum"), "seats")
		}
	}
	if err := d.End(); err != nil {
		return nil, err
	}
	if !seen {
		return nil, wire.Missing("seats")
	}
	return c, nil
}

func (c *seatsCall) Run(context.Context) error { return nil }

func (c *seatsCall) Result(e *wire.Encoder) error {
	e.ObjectStart()
	e.Member(`"seats":`)
	e.Int(c.n)
	e.ObjectEnd()
	return nil
}

const seatsIn = `{"type":"object","additionalProperties":false,"required":["seats"],"properties":{"seats":{"type":"integer","minimum":1,"maximum":10}}}`

func seatsTool(name string, lax bool) *runtime.Tool {
	return runtime.NewTool(runtime.ToolInfo{Name: name, Version: "1", Effect: runtime.EffectRead, Description: "Books seats.",
		InputSchema: json.RawMessage(seatsIn), OutputSchema: json.RawMessage(`{"type":"object"}`), LaxNumbers: lax}, seats{})
}

// A tool with LaxNumbers takes the numbers models send as strings or with
// a fraction, checked as any number (bounds, integer); the same tool
// without it refuses them; a hand-bound tool cannot have it.
func TestLaxNumbersReadWhatModelsSend(t *testing.T) {
	set, err := keeltest.Locked(seatsTool("book_lax", true), seatsTool("book_strict", false))
	if err != nil {
		t.Fatal(err)
	}
	exec, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool, args string
		want       string // the data, or the code
	}{
		{"book_lax", `{"seats":"5"}`, `{"seats":5}`},
		{"book_lax", `{"seats":2.0}`, `{"seats":2}`},
		{"book_lax", `{"seats":"12"}`, "invalid_arguments"},
		{"book_lax", `{"seats":"2.5"}`, "invalid_arguments"},
		{"book_lax", `{"seats":"five"}`, "invalid_arguments"},
		{"book_strict", `{"seats":5}`, `{"seats":5}`},
		{"book_strict", `{"seats":"5"}`, "invalid_arguments"},
		{"book_strict", `{"seats":2.0}`, "invalid_arguments"},
	} {
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "c", Name: c.tool, Arguments: json.RawMessage(c.args)})
		got := string(r.Data)
		if !r.OK {
			got = string(r.Code())
		}
		if got != c.want {
			t.Errorf("%s %s: %s; want %s", c.tool, c.args, got, c.want)
		}
	}

	bound := runtime.NewTool(runtime.ToolInfo{Name: "hand", Version: "1", Effect: runtime.EffectRead, Description: "Books seats.",
		InputSchema: json.RawMessage(seatsIn), OutputSchema: json.RawMessage(`{"type":"object"}`), LaxNumbers: true},
		runtime.Handle(func(_ context.Context, a struct {
			Seats int `json:"seats"`
		}) (map[string]int, error) {
			return map[string]int{"seats": a.Seats}, nil
		}))
	if _, err := runtime.NewExecutor(keeltest.Of(bound)); err == nil || !strings.Contains(err.Error(), "LaxNumbers needs keelgen's generated reader") {
		t.Fatalf("a hand-bound tool with LaxNumbers: %v", err)
	}
}
