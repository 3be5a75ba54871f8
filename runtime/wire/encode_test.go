package wire

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// String writes what jsontext.AppendQuote writes, for every byte in every
// position of strings of every length around the eight-byte words.
func TestStringAgreesWithAppendQuote(t *testing.T) {
	var inputs []string
	for n := range 20 {
		base := strings.Repeat("a", n)
		inputs = append(inputs, base, base+"é", "登录"+base)
		for pos := 0; pos <= n; pos++ {
			for _, b := range []byte{0x00, 0x1f, 0x20, '"', '\\', 0x7f, 0x80, 0xc3, 0xff, '/', '<'} {
				inputs = append(inputs, base[:pos]+string([]byte{b})+base[pos:])
			}
		}
	}
	var e Encoder
	for _, s := range inputs {
		e.Reset(1 << 20)
		err := e.String(s)
		want, wantErr := jsontext.AppendQuote(nil, s)
		if (err != nil) != (wantErr != nil) || (err == nil && string(e.Bytes()) != string(want)) {
			t.Errorf("%q: wrote %q (%v), AppendQuote %q (%v)", s, e.Bytes(), err, want, wantErr)
		}
	}
}

func FuzzString(f *testing.F) {
	f.Add("plain text", "登录接口持续返回 502")
	f.Fuzz(func(t *testing.T, a, b string) {
		var e Encoder
		for _, s := range []string{a, b, a + b} {
			e.Reset(1 << 20)
			err := e.String(s)
			want, wantErr := jsontext.AppendQuote(nil, s)
			if (err != nil) != (wantErr != nil) || (err == nil && string(e.Bytes()) != string(want)) {
				t.Fatalf("%q: wrote %q (%v), AppendQuote %q (%v)", s, e.Bytes(), err, want, wantErr)
			}
		}
	})
}
