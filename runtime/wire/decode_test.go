package wire_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/keelgen/keel/runtime/wire"
)

// A decoder reads numbers as written unless told to read them laxly
// (lax=numbers): then a string holding one JSON number is that number, and
// an integer may be written 2.0 or 2e1; anything else is refused as before.
func TestLaxNumbers(t *testing.T) {
	read := func(lax bool, lit string, as string) string {
		var d wire.Decoder
		d.Reset([]byte(lit), 4)
		if lax {
			d.LaxNumbers()
		}
		var v any
		var err error
		switch as {
		case "int":
			v, err = d.Int(8)
		case "uint":
			v, err = d.Uint(64)
		case "float":
			v, err = d.Float(64)
			if err == nil {
				v = fmt.Sprint(v, " ", string(d.Literal()))
			}
		}
		if err != nil {
			msg := err.Error() // "/: keyword: reason": the pointer and keyword
			if i := strings.Index(msg[3:], ":"); i >= 0 {
				msg = msg[:3+i]
			}
			return "error: " + msg
		}
		return fmt.Sprint(v)
	}
	for _, c := range []struct {
		lax          bool
		lit, as, got string
	}{
		{false, `5`, "int", "5"},
		{false, `"5"`, "int", "error: /: type"},
		{false, `2.0`, "int", "error: /: type"},
		{true, `"5"`, "int", "5"},
		{true, `"-12"`, "int", "-12"},
		{true, `2.0`, "int", "2"},
		{true, `"2e1"`, "int", "20"},
		{true, `2.5`, "int", "error: /: type"},
		{true, `"300"`, "int", "error: /: range"},
		{true, `"-1"`, "uint", "error: /: range"},
		{true, `" 5"`, "int", "error: /: type"},
		{true, `"5 "`, "int", "error: /: type"},
		{true, `"+5"`, "int", "error: /: type"},
		{true, `"0x10"`, "int", "error: /: type"},
		{true, `""`, "int", "error: /: type"},
		{true, `"five"`, "int", "error: /: type"},
		{true, `true`, "int", "error: /: type"},
		{true, `"2.5"`, "float", "2.5 2.5"},
		{true, `"1e400"`, "float", "error: /: range"},
		{false, `"2.5"`, "float", "error: /: type"},
	} {
		if got := read(c.lax, c.lit, c.as); got != c.got {
			t.Errorf("lax %v, %s as %s: %s; want %s", c.lax, c.lit, c.as, got, c.got)
		}
	}
}
