package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Decoder reads one JSON object token by token. jsontext refuses invalid
// UTF-8 and malformed JSON; the generated readers refuse a member named
// twice (they know each object's members, and compare names unescaped),
// and Raw refuses duplicates inside the value it keeps. Decoder adds the
// depth cap and what generated code asks for.
type Decoder struct {
	dec      jsontext.Decoder
	src      bytes.Buffer
	raw      []byte
	maxDepth int
	num      []byte // the last number's literal, valid until the next read
	scratch  []byte // unescaped names
	lax      bool   // LaxNumbers, until the next Reset
}

// Source is the whole input d reads.
func (d *Decoder) Source() []byte { return d.raw }

// Reset makes d read raw, refusing nesting deeper than maxDepth.
func (d *Decoder) Reset(raw []byte, maxDepth int) {
	d.raw = raw
	d.src = *bytes.NewBuffer(raw) // the decoder reads a *bytes.Buffer in place, without a copy
	d.dec.Reset(&d.src, duplicatesChecked)
	d.maxDepth = maxDepth
	d.num = nil
	d.lax = false
}

// LaxNumbers makes d read numbers laxly until the next Reset, for a tool
// whose author asked for it (lax=numbers): a string holding a JSON number
// ("5", "-2.5") is read as that number, and Int and Uint also take an
// integral number written with a fraction or an exponent (2.0, 2e1). What
// is read is checked as any number is.
func (d *Decoder) LaxNumbers() { d.lax = true }

// duplicatesChecked leaves duplicate names to the readers, which check
// them for less than jsontext's namespaces cost.
var duplicatesChecked = jsontext.AllowDuplicateNames(true)

// jsonError wraps an error of the JSON layer.
func jsonError(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &Error{Keyword: "json", Reason: err.Error()}
}

// kindName is a kind as the JSON Schema "type" keyword names it.
func kindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "nothing"
}

// token reads the next token, refusing one of another kind than want. A
// value of the wrong kind ends the read, so it is not read to its end.
func (d *Decoder) token(want jsontext.Kind, name string) (jsontext.Token, error) {
	tok, err := d.dec.ReadToken()
	if err != nil {
		return tok, jsonError(err)
	}
	if k := tok.Kind(); k != want && !(want == 't' && k == 'f') {
		return tok, Failf("type", kindName(k)+", not "+name)
	}
	return tok, nil
}

// ObjectStart reads '{'.
func (d *Decoder) ObjectStart() error {
	if _, err := d.token('{', "object"); err != nil {
		return err
	}
	if d.dec.StackDepth() > d.maxDepth {
		return Failf("maxDepth", "nesting deeper than "+strconv.Itoa(d.maxDepth))
	}
	return nil
}

// ArrayStart reads '['.
func (d *Decoder) ArrayStart() error {
	if _, err := d.token('[', "array"); err != nil {
		return err
	}
	if d.dec.StackDepth() > d.maxDepth {
		return Failf("maxDepth", "nesting deeper than "+strconv.Itoa(d.maxDepth))
	}
	return nil
}

// More reports whether the current object or array has another member.
func (d *Decoder) More() bool {
	k := d.dec.PeekKind()
	return k != '}' && k != ']' && k != 0
}

// End reads the '}' or ']' that closes the current object or array.
func (d *Decoder) End() error {
	if _, err := d.dec.ReadToken(); err != nil {
		return jsonError(err)
	}
	return nil
}

// Name reads a member name. The bytes are valid until the next read.
func (d *Decoder) Name() ([]byte, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, jsonError(err)
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, nil
	}
	d.scratch, err = jsontext.AppendUnquote(d.scratch[:0], v)
	if err != nil {
		return nil, jsonError(err)
	}
	return d.scratch, nil
}

// Key reads a map key as a string.
func (d *Decoder) Key() (string, error) {
	b, err := d.Name()
	return string(b), err
}

// Null reads a null and reports true, or reads nothing and reports false.
func (d *Decoder) Null() bool {
	if d.dec.PeekKind() != 'n' {
		return false
	}
	_, err := d.dec.ReadToken()
	return err == nil
}

// Kind is the kind of the next value without reading it, as jsontext
// names it: '"' a string, '0' a number, 't' or 'f' a boolean, 'n' null,
// '{' an object, '[' an array; 0 at the end or at invalid input. A
// generated union's reader chooses its alternative by it.
func (d *Decoder) Kind() byte { return byte(d.dec.PeekKind()) }

// String reads a string: its bytes as the decoder checked them, copied
// once, and unescaped only when they hold an escape.
func (d *Decoder) String() (string, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return "", jsonError(err)
	}
	if k := v.Kind(); k != '"' {
		return "", Failf("type", kindName(k)+", not string")
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), nil
	}
	d.scratch, err = jsontext.AppendUnquote(d.scratch[:0], v)
	if err != nil {
		return "", jsonError(err)
	}
	return string(d.scratch), nil
}

// Bool reads true or false.
func (d *Decoder) Bool() (bool, error) {
	tok, err := d.token('t', "boolean")
	if err != nil {
		return false, err
	}
	return tok.Bool(), nil
}

// number reads a number's literal.
func (d *Decoder) number(name string) ([]byte, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, jsonError(err)
	}
	if v.Kind() == '"' && d.lax {
		if v, err = laxNumber(v); err != nil {
			return nil, err
		}
	}
	if k := v.Kind(); k != '0' {
		return nil, Failf("type", kindName(k)+", not "+name)
	}
	if p := NumberProblem(v); p != "" {
		return nil, Failf("range", p)
	}
	d.num = v
	return v, nil
}

// Int reads an integer that fits in bits bits. It must be written as one:
// 2.0 and 2e0 are integers to JSON Schema, but keel reads integers as
// written, as json v2 does, and refuses them ("type").
func (d *Decoder) Int(bits int) (int64, error) {
	lit, err := d.number("integer")
	if err != nil {
		return 0, err
	}
	digits := lit
	if d.lax { // the check inline, the lax reading out of the common path
		digits = integral(lit)
	}
	n, err := strconv.ParseInt(string(digits), 10, bits)
	if err != nil {
		return 0, intError(lit, "int", bits)
	}
	return n, nil
}

// Uint reads a non-negative integer that fits in bits bits.
func (d *Decoder) Uint(bits int) (uint64, error) {
	lit, err := d.number("integer")
	if err != nil {
		return 0, err
	}
	digits := lit
	if d.lax {
		digits = integral(lit)
	}
	n, err := strconv.ParseUint(string(digits), 10, bits)
	if err != nil {
		return 0, intError(lit, "uint", bits)
	}
	return n, nil
}

// integral is lit as an integer's digits, for a decoder that reads
// laxly, when lit, with a fraction or an exponent, is an integer in value
// (2.0, 2e1); else lit.
func integral(lit []byte) []byte {
	if !bytes.ContainsAny(lit, ".eE") {
		return lit
	}
	r, ok := new(big.Rat).SetString(string(lit))
	if !ok || !r.IsInt() {
		return lit
	}
	return r.Num().Append(nil, 10)
}

// laxNumber is the number a string holds, as its literal: a string that
// holds anything but one JSON number is refused.
func laxNumber(v jsontext.Value) (jsontext.Value, error) {
	s, err := jsontext.AppendUnquote(nil, v)
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	if err != nil || len(s) == 0 || s[0] != '-' && !digit(s[0]) || !digit(s[len(s)-1]) || !jsontext.Value(s).IsValid() {
		return nil, Failf("type", "a string that holds no number")
	}
	return jsontext.Value(s), nil
}

// intError says why an integer literal did not parse: a fraction or an
// exponent, or a value outside the Go type.
func intError(lit []byte, kind string, bits int) error {
	if bytes.ContainsAny(lit, ".eE") {
		return Failf("type", "an integer written with a fraction or an exponent")
	}
	return Failf("range", "an integer outside "+kind+strconv.Itoa(bits))
}

// Float reads a number as the nearest float of bits bits. A number beyond
// the float's range is refused; one too small for it becomes zero, and the
// bounds are then checked on that zero.
func (d *Decoder) Float(bits int) (float64, error) {
	lit, err := d.number("number")
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(lit), bits)
	if err != nil || math.IsInf(f, 0) {
		return 0, Failf("range", "a number outside float"+strconv.Itoa(bits))
	}
	return f, nil
}

// Time reads an RFC 3339 date-time into a time.Time.
func (d *Decoder) Time() (time.Time, error) {
	s, err := d.String()
	if err != nil {
		return time.Time{}, err
	}
	if err := CheckFormat("date-time", s); err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, Failf("range", "a date-time time.Time cannot hold (a leap second)")
	}
	return t, nil
}

// Raw reads any JSON value as compact bytes of its own.
func (d *Decoder) Raw() (json.RawMessage, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, jsonError(err)
	}
	depth, number := scanRaw(v)
	if depth+d.dec.StackDepth() > d.maxDepth {
		return nil, Failf("maxDepth", "nesting deeper than "+strconv.Itoa(d.maxDepth))
	}
	if !v.IsValid() { // with jsontext's defaults: no duplicate names at any depth
		return nil, Failf("json", "a member named twice")
	}
	if number != "" { // the same bounds as every other number
		return nil, Failf("range", number)
	}
	return jsontext.AppendFormat(nil, v)
}

// Finish refuses anything after the top-level value.
func (d *Decoder) Finish() error {
	if _, err := d.dec.ReadValue(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the JSON object")
		}
		return jsonError(err)
	}
	return nil
}

// Literal is the last number's literal, for the exact checks below; valid
// until the next read.
func (d *Decoder) Literal() []byte { return d.num }
