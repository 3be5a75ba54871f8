package wire

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// An open value is written as the JSON data it holds, keys sorted, nil
// collections as json v2 writes them; a Go value that is not JSON data, a
// number JSON cannot hold, and nesting past the cap are refused with the
// keyword, and a huge value stops at the size cap.
func TestAnyWritesJSONData(t *testing.T) {
	var nilMap map[string]any
	var nilList []any
	for _, c := range []struct {
		v    any
		want string // or the keyword of the refusal
	}{
		{map[string]any{"b": 1.5, "a": []any{true, nil, "x<y"}, "c": map[string]string{"z": "1", "y": "2"}}, `{"a":[true,null,"x<y"],"b":1.5,"c":{"y":"2","z":"1"}}`},
		{[]map[string]any{{"n": json.Number("12.50")}}, `[{"n":12.50}]`},
		{[]string{"a"}, `["a"]`},
		{json.RawMessage(`{"k": [1, 2]}`), `{"k":[1,2]}`},
		{nilMap, `{}`},
		{nilList, `[]`},
		{int64(-3), `-3`},
		{uint64(math.MaxUint64), `18446744073709551615`},
		{struct{ A int }{1}, "type"},
		{map[string]any{"f": math.Inf(1)}, "type"},
		{json.Number("1e"), "type"},
		{json.Number("0x10"), "type"},
		{"\xff", "json"},
		// A raw value keeps the caps every other value keeps, at any depth.
		{json.RawMessage(strings.Repeat("[", 9000) + strings.Repeat("]", 9000)), "depth"},
		{json.RawMessage(`{"n":1e99999999}`), "range"},
		{map[string]any{"r": json.RawMessage(`[1e-99999999]`)}, "range"},
		{json.RawMessage(strings.Repeat("[", MaxWriteDepth) + strings.Repeat("]", MaxWriteDepth)), strings.Repeat("[", MaxWriteDepth) + strings.Repeat("]", MaxWriteDepth)},
	} {
		var e Encoder
		e.Reset(1 << 20)
		err := e.Any(c.v)
		got := string(e.Bytes())
		if err != nil {
			got = err.(*Error).Keyword
		}
		if got != c.want {
			t.Errorf("%#v: got %s, want %s", c.v, got, c.want)
		}
	}
	deep := any("x")
	for range MaxWriteDepth + 1 {
		deep = []any{deep}
	}
	var e Encoder
	e.Reset(1 << 24)
	if err := e.Any(deep); err == nil || err.(*Error).Keyword != "depth" {
		t.Errorf("nesting past the cap: %v", err)
	}
	// Levels of an open value count toward a raw value inside it.
	inner := any(json.RawMessage(strings.Repeat("[", MaxWriteDepth-1) + strings.Repeat("]", MaxWriteDepth-1)))
	e.Reset(1 << 24)
	if err := e.Any([]any{[]any{inner}}); err == nil || err.(*Error).Keyword != "depth" {
		t.Errorf("a raw value nested past the cap inside an open one: %v", err)
	}
	e.Reset(1 << 10)
	if err := e.Any([]any{strings.Repeat("x", 600), strings.Repeat("y", 600)}); err == nil || err.(*Error).Keyword != "maxBytes" {
		t.Errorf("over the size cap: %v", err)
	}
}
