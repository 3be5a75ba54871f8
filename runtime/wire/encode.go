package wire

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Encoder appends one result's JSON, the way json v2 encodes it: members
// in field order, floats in their shortest form, strings in the minimal
// escaping of RFC 8785, invalid UTF-8 refused. It stops at its size cap.
type Encoder struct {
	buf   []byte
	max   int
	depth int // levels of a type that contains itself, entered and not left
}

// MaxWriteDepth bounds how deep a value of a type that contains itself is
// written: a cycle of pointers (or of slices sharing an array) is refused
// there, not followed until the stack runs out.
const MaxWriteDepth = 1000

// Reset empties e and caps what it may write at max bytes.
func (e *Encoder) Reset(max int) { e.ResetInto(e.buf, max) }

// ResetInto empties e, which then writes into buf's spare capacity (its
// length is dropped), and caps what it may write at max bytes: what Bytes
// then returns is the caller's to keep.
func (e *Encoder) ResetInto(buf []byte, max int) {
	e.buf, e.max, e.depth = buf[:0], max, 0
}

// Enter counts one level of a value of a type that contains itself, which
// generated writers of such a type call first; past MaxWriteDepth it fails.
// Leave undoes it.
func (e *Encoder) Enter() error {
	if e.depth++; e.depth > MaxWriteDepth {
		return Failf("depth", "the result nests deeper than "+strconv.Itoa(MaxWriteDepth)+" levels (a cycle?)")
	}
	return nil
}

// Leave ends a level Enter began.
func (e *Encoder) Leave() { e.depth-- }

// Bytes is what was written; valid until the next Reset.
func (e *Encoder) Bytes() []byte { return e.buf }

// Cap returns an error once more than the cap has been written; generated
// code checks it in every loop, so a huge result stops early.
func (e *Encoder) Cap() error {
	if len(e.buf) > e.max {
		return Failf("maxBytes", "the result is over "+strconv.Itoa(e.max)+" bytes")
	}
	return nil
}

// ObjectStart writes '{', ArrayStart '[', and ObjectEnd and ArrayEnd close them.
func (e *Encoder) ObjectStart() { e.buf = append(e.buf, '{') }
func (e *Encoder) ObjectEnd()   { e.buf = append(e.buf, '}') }
func (e *Encoder) ArrayStart()  { e.buf = append(e.buf, '[') }
func (e *Encoder) ArrayEnd()    { e.buf = append(e.buf, ']') }

// sep writes the comma before a member or an element that is not the first.
func (e *Encoder) sep() {
	if n := len(e.buf); n > 0 && e.buf[n-1] != '{' && e.buf[n-1] != '[' {
		e.buf = append(e.buf, ',')
	}
}

// Mark is where a member starts and where its value starts.
type Mark struct{ member, value int }

// Member writes a member's name, given quoted and with its colon
// (`"id":`), as generated code has it.
func (e *Encoder) Member(quotedName string) Mark {
	m := Mark{member: len(e.buf)}
	e.sep()
	e.buf = append(e.buf, quotedName...)
	m.value = len(e.buf)
	return m
}

// Key writes a map key.
func (e *Encoder) Key(k string) error {
	e.sep()
	var err error
	e.buf, err = jsontext.AppendQuote(e.buf, k)
	e.buf = append(e.buf, ':')
	if err != nil {
		return Failf("json", "a map key is not valid UTF-8")
	}
	return nil
}

// Elem writes the comma before an array element.
func (e *Encoder) Elem() { e.sep() }

// OmitEmpty removes the member at m if its value was written as null, "",
// [] or {}: omitempty as json v2 defines it.
func (e *Encoder) OmitEmpty(m Mark) {
	switch string(e.buf[m.value:]) {
	case "null", `""`, "[]", "{}":
		e.buf = e.buf[:m.member]
	}
}

// Omitted reports whether the member at m was removed.
func (e *Encoder) Omitted(m Mark) bool { return len(e.buf) <= m.member }

// Null writes null.
func (e *Encoder) Null() { e.buf = append(e.buf, "null"...) }

// String writes s; invalid UTF-8 is refused.
func (e *Encoder) String(s string) error {
	if plain(s) { // the common case: nothing to escape
		e.buf = append(append(append(e.buf, '"'), s...), '"')
		return nil
	}
	var err error
	e.buf, err = jsontext.AppendQuote(e.buf, s)
	if err != nil {
		return Failf("json", "a string that is not valid UTF-8")
	}
	return nil
}

// Bool writes b.
func (e *Encoder) Bool(b bool) { e.buf = strconv.AppendBool(e.buf, b) }

// Int and Uint write integers.
func (e *Encoder) Int(n int64)   { e.buf = strconv.AppendInt(e.buf, n, 10) }
func (e *Encoder) Uint(n uint64) { e.buf = strconv.AppendUint(e.buf, n, 10) }

// Float writes f in its shortest form and returns that literal, for the
// exact bound checks; NaN and infinities have no JSON form and are refused.
func (e *Encoder) Float(f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, Failf("type", "NaN or an infinity")
	}
	start := len(e.buf)
	e.buf = appendFloat(e.buf, f, bits)
	return e.buf[start:], nil
}

// appendFloat appends f as json v2 writes a float of bits (ECMAScript's
// Number::toString, RFC 8785): the shortest decimal that reads back as
// the same float, in exponent form below 1e-6 and from 1e21, its
// exponent without leading zeros. Written here, since the standard
// library's encoding/json/jsontext offers no such function.
func appendFloat(dst []byte, f float64, bits int) []byte {
	if bits == 32 {
		f = float64(float32(f))
	}
	format, abs := byte('f'), math.Abs(f)
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if n := len(dst); format == 'e' && n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2], dst = dst[n-1], dst[:n-1] // e-09 is e-9
	}
	return dst
}

// Time writes t as RFC 3339 with nanoseconds, as json v2 does.
func (e *Encoder) Time(t time.Time) error {
	if y := t.Year(); y < 0 || y > 9999 {
		return Failf("format", "a year outside 0 to 9999")
	}
	e.buf = append(e.buf, '"')
	e.buf = t.AppendFormat(e.buf, time.RFC3339Nano)
	e.buf = append(e.buf, '"')
	return nil
}

// Raw writes a json.RawMessage compactly; nil is null, and bytes that are
// not one valid JSON value are refused, as are those over the caps every
// other value keeps: nesting past MaxWriteDepth (counting the levels it is
// written in) and a number NumberProblem refuses.
func (e *Encoder) Raw(v json.RawMessage) error {
	if v == nil {
		e.Null()
		return nil
	}
	depth, number := scanRaw(v)
	if depth+e.depth > MaxWriteDepth {
		return Failf("depth", "a raw value nests deeper than "+strconv.Itoa(MaxWriteDepth)+" levels")
	}
	if number != "" {
		return Failf("range", number)
	}
	var err error
	if e.buf, err = jsontext.AppendFormat(e.buf, v); err != nil {
		return Failf("json", "a raw value that is not valid JSON")
	}
	return nil
}

// plain reports whether s needs no escaping: valid UTF-8 without control
// characters, quotes or backslashes (RFC 8785 escapes nothing else). It
// looks at eight bytes at a time.
func plain(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	var high uint64
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		high |= x
		if (x-ones*0x20)&^x&highs|zeroByte(x^(ones*'"'))|zeroByte(x^(ones*'\\')) != 0 && !plainBytes(s[i:i+8]) {
			return false
		}
	}
	if !plainBytes(s[i:]) {
		return false
	}
	return high&highs == 0 && asciiOnly(s[i:]) || utf8.ValidString(s)
}

// zeroByte is non-zero when a byte of x is zero; (x-ones*0x20)&^x&highs,
// when a byte is below 0x20. Either may flag a byte next to the one that
// is, never a word without one; a flagged word is checked byte by byte.
func zeroByte(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (x - ones) &^ x & highs
}

// plainBytes checks a few bytes one by one.
func plainBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
