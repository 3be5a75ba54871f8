package ask_test

import (
	"strings"
	"testing"

	"github.com/keelgen/keel/runtime/ask"
)

// A form answer's number is bounded before any arithmetic, as on every
// other path: an exponent no Go number holds and a literal past
// wire.MaxNumberLength are refused, not handed to math/big (whose time
// grows with the exponent: 1e-999999 took 123 ms to compare with 0).
func TestAnswerNumbersAreBoundedBeforeArithmetic(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"n":{"type":"number","minimum":0}},"required":["n"]}`)
	for _, c := range []struct {
		content string
		ok      bool
	}{
		{`{"n":1}`, true},
		{`{"n":1e-300}`, true},
		{`{"n":1e-999999}`, false},
		{`{"n":1E+99999999}`, false},
		{`{"n":0.` + strings.Repeat("1", 1000) + `}`, false},
		{`{"n":-1}`, false},
	} {
		var v struct {
			N float64 `json:"n"`
		}
		err := ask.Decode(schema, []byte(c.content), &v)
		if (err == nil) != c.ok {
			t.Errorf("%.40s: %v, want ok %v", c.content, err, c.ok)
		}
	}
}
