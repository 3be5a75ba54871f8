package wire_test

import (
	"strings"
	"testing"

	"github.com/keelgen/keel/runtime/wire"
)

// A json.RawMessage member gets the number bounds every other number gets:
// no four-digit exponent, no literal over MaxNumberLength bytes, at any
// depth inside the raw value; strings that look like numbers are strings.
func TestRawValuesKeepTheNumberBounds(t *testing.T) {
	for raw, keyword := range map[string]string{
		`1e300000`:                 "range",
		`{"a":[1,{"b":-2E-1000}]}`: "range",
		`[0.` + strings.Repeat("0", wire.MaxNumberLength) + `1]`: "range",
		`{"a":"1e300000","b":1e300}`:                             "",
		`{"e":true,"f":false,"n":null}`:                          "",
		`"` + strings.Repeat("9", 2000) + `"`:                    "",
	} {
		var d wire.Decoder
		d.Reset([]byte(raw), 64)
		_, err := d.Raw()
		got := ""
		if err != nil {
			got = err.(*wire.Error).Keyword
		}
		if got != keyword {
			t.Errorf("%.60s: keyword %q (%v), want %q", raw, got, err, keyword)
		}
	}
}
