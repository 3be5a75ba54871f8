package wire

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/keelgen/keel/internal/toolrules"
)

// The checks below compare a Go value with a schema bound. A float bound
// is given twice: as the float the generator parsed it to, and exactly, as
// the schema writes it. A float is compared as a float first; only a value
// equal to the bound's float needs the exact comparison of the number's
// literal, since rounding keeps order.

// Maximum refuses v above bound; lit is the number's literal.
func Maximum(v, bound float64, exact string, lit []byte) error {
	if v > bound || (v == bound && cmpDecimal(parseDecimal(lit), parseDecimal([]byte(exact))) > 0) {
		return Fail("maximum")
	}
	return nil
}

// Minimum refuses v below bound.
func Minimum(v, bound float64, exact string, lit []byte) error {
	if v < bound || (v == bound && cmpDecimal(parseDecimal(lit), parseDecimal([]byte(exact))) < 0) {
		return Fail("minimum")
	}
	return nil
}

// ExclusiveMaximum refuses v at or above bound: a number that rounds onto
// the bound is refused, because the bound is what the handler would get.
func ExclusiveMaximum(v, bound float64) error {
	if v >= bound {
		return Failf("exclusiveMaximum", "at or above the bound, as the Go value")
	}
	return nil
}

// ExclusiveMinimum refuses v at or below bound.
func ExclusiveMinimum(v, bound float64) error {
	if v <= bound {
		return Failf("exclusiveMinimum", "at or below the bound, as the Go value")
	}
	return nil
}

// MultipleOf refuses a number whose literal is not an integer multiple of
// exact (checked exactly, as JSON Schema does).
func MultipleOf(exact string, lit []byte) error {
	if !isMultiple(parseDecimal(lit), parseDecimal([]byte(exact))) {
		return Fail("multipleOf")
	}
	return nil
}

// EqualNumber reports whether the number's literal equals exact.
func EqualNumber(lit []byte, exact string) bool {
	return cmpDecimal(parseDecimal(lit), parseDecimal([]byte(exact))) == 0
}

// Length counts s in code points, as minLength and maxLength do.
func Length(s string) int { return utf8.RuneCountInString(s) }

// formats are the format checks of the schema compiler keel runs
// (toolrules.CompileSchema): internal/formats' for the formats keel holds
// to their RFCs, the JSON Schema validator's for the rest, so the
// generated code and the hand-bound path agree on every format. They are
// compiled on first use, not at the start of every program that links keel.
var formats = sync.OnceValue(func() map[string]func(any) error {
	out := map[string]func(any) error{}
	for _, name := range formatNames {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		toolrules.RegisterFormats(c)            // those keel holds to their RFCs itself (internal/formats)
		c.UseRegexpEngine(toolrules.ECMARegexp) // the regex format: a pattern ECMA-262 and keel read alike
		doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(fmt.Appendf(nil, `{"format":%q}`, name)))
		if err := c.AddResource("keel:///format.json", doc); err != nil {
			panic(err)
		}
		s, err := c.Compile("keel:///format.json")
		if err != nil {
			panic(fmt.Sprintf("wire: format %s: %v", name, err))
		}
		if s.Format != nil { // a format the validator does not know is not checked there either
			out[name] = s.Format.Validate
		}
	}
	return out
})

// HasFormat reports whether generated code can check format name.
func HasFormat(name string) bool { return formats()[name] != nil }

// Formats are the formats asked of the validator (a copy); HasFormat says
// which it knows.
func Formats() []string { return slices.Clone(formatNames) }

var formatNames = []string{
	"date-time", "date", "time", "duration", "email", "hostname",
	"ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uri-template", "uuid",
	"json-pointer", "relative-json-pointer", "regex", "period", "semver",
}

// CheckFormat refuses s when it is not of format name.
func CheckFormat(name, s string) error {
	check, ok := formats()[name]
	if !ok {
		return Failf("format", "keel does not know format "+name)
	}
	if check(s) != nil {
		return Fail("format")
	}
	return nil
}

// Unique refuses a slice with two equal items (uniqueItems), comparing
// their JSON encodings, as JSON Schema compares values.
func Unique[T comparable](items []T) error {
	seen := make(map[T]struct{}, len(items))
	for _, it := range items {
		if _, dup := seen[it]; dup {
			return Fail("uniqueItems")
		}
		seen[it] = struct{}{}
	}
	return nil
}
