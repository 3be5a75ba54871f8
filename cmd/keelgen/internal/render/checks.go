package render

import (
	"encoding/json"
	"go/types"
	"math"
	"math/big"
	"regexp"
	"strings"
	"time"

	"github.com/keelgen/keel/internal/toolrules"
	"github.com/keelgen/keel/runtime/wire"
)

// The checks of one leaf value, or of a container's size, are planned here
// from its schema node: every bound worked out exactly, every keyword that
// cannot be checked refused with a diagnostic. checks_emit.go prints a plan
// and cannot fail.

// check is one keyword's test of a value, in the order it runs.
type check struct {
	keyword string
	// always: no value of the Go type passes (an enum with none of its
	// values, an integer bound beyond the type's range); the code fails.
	always bool
	op     string   // a bound's or a count's comparison that fails: "<", "<=", ">", ">="
	n      int      // a length or count bound
	int    *big.Int // an integer bound, or multipleOf's divisor
	// nonZero: multipleOf beyond an integer type's range, which only 0 meets.
	nonZero bool
	float   float64 // a float bound, as the value's Go type holds it
	text    string  // a float bound or multiple as written; a format
	pattern string  // the var holding a compiled pattern
	values  []any   // enum or const values of the value's type: string, bool, *big.Int, json.Number
	// A bound on a text value (formatMinimum, ...): a duration's, or a
	// decimal's as text (in text).
	dur     time.Duration
	decimal bool
}

// textBoundKeywords bound a value written as text, compared in its own
// form (ajv-formats' names): a time.Duration's, a decimal text type's.
var textBoundKeywords = []string{"formatMinimum", "formatExclusiveMinimum", "formatMaximum", "formatExclusiveMaximum"}

// textBounds plans the bounds on a duration or a decimal text type (k) from
// n: each bound a string the value's own text form reads, worked out here.
func (g *codecs) textBounds(n node, k kind, ptr string) []check {
	var out []check
	for _, kw := range textBoundKeywords {
		raw, ok := n.OtherValue(kw)
		if !ok {
			continue
		}
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			g.fail(ptr, "%s must be a string in the value's own text form, such as \"1m\" or \"0.5\"", kw)
			continue
		}
		switch k {
		case kDuration:
			d, err := time.ParseDuration(text)
			if err != nil {
				g.fail(ptr, "%s %q is not a Go duration, such as 90s or 168h", kw, text)
				continue
			}
			out = append(out, check{keyword: kw, dur: d, text: text})
		case kText:
			if !toolrules.DecimalText(text) {
				g.fail(ptr, "%s %q is not a decimal number, such as 0 or 12.5", kw, text)
				continue
			}
			out = append(out, check{keyword: kw, decimal: true, text: text})
		default:
			g.fail(ptr, "%s bounds a time.Duration or a decimal text type only; on a number use minimum or maximum", kw)
		}
	}
	return out
}

// stringChecks plans the checks of a string against n; hint names the
// pattern var it may need.
func (g *codecs) stringChecks(n node, ptr, hint string) []check {
	var out []check
	if e := enumValues(n); e != nil {
		var values []any
		for _, v := range e.values {
			if s, ok := v.(string); ok {
				values = append(values, s)
			}
		}
		out = append(out, enumCheck(e.keyword, values))
	}
	if v, ok := num(n, "minLength"); ok {
		out = append(out, check{keyword: "minLength", op: "<", n: intOf(v)})
	}
	if v, ok := num(n, "maxLength"); ok {
		out = append(out, check{keyword: "maxLength", op: ">", n: intOf(v)})
	}
	if re := n.Pattern; re != "" {
		// JSON Schema's patterns are ECMA-262's; the generated check runs
		// RE2 on the pattern as ECMA-262 reads it.
		translated, err := toolrules.ECMAPattern(re)
		if err != nil {
			g.fail(ptr, "pattern %q reads otherwise in ECMA-262, which JSON Schema's patterns follow, than in Go's RE2: %v", re, err)
		} else if _, err := regexp.Compile(translated); err != nil {
			g.fail(ptr, "pattern does not compile: %v", err)
		}
		out = append(out, check{keyword: "pattern", pattern: g.pattern(translated, hint)})
	}
	if n.Not != nil {
		out = append(out, g.notCheck(n.Not, ptr))
	}
	if f := n.Format; f != "" {
		if !wire.HasFormat(f) {
			g.fail(ptr, "format %q cannot be checked (keel checks %s)", f, strings.Join(knownFormats(), ", "))
		}
		out = append(out, check{keyword: "format", text: f})
	}
	return out
}

// notCheck plans not over an enum or a const of strings: the values a
// string may not be (reserved names).
func (g *codecs) notCheck(not node, ptr string) check {
	e := enumValues(not)
	if e == nil || len(assertions(not)) != 1 {
		g.fail(ptr, "not is checked by generated code as not {\"enum\": [...]} or not {\"const\": ...} of strings")
		return check{keyword: "not"}
	}
	var values []any
	for _, v := range e.values {
		if s, ok := v.(string); ok {
			values = append(values, s)
		}
	}
	return check{keyword: "not", values: values}
}

// enumCheck is enum or const over the values of the value's type; with none
// of them, no value passes.
func enumCheck(keyword string, values []any) check {
	return check{keyword: keyword, values: values, always: len(values) == 0}
}

// boolChecks plans enum or const on a boolean.
func boolChecks(n node) []check {
	e := enumValues(n)
	if e == nil {
		return nil
	}
	var values []any
	for _, v := range e.values {
		if b, ok := v.(bool); ok {
			values = append(values, b)
		}
	}
	return []check{enumCheck(e.keyword, values)}
}

// intChecks plans the checks of an integer of Go type t against n, each
// bound worked out exactly: one the type's range decides is no check (every
// value passes) or a failure (none does). A bound is kept as written when it
// is a whole number; a fractional one is rounded onto the integers first
// (x >= 2.5 is x >= 3).
func intChecks(n node, t types.Type, k kind) []check {
	var out []check
	lo, hi := intRange(t, k)
	for _, c := range []struct {
		keyword, op, fracOp string
		round               func(*big.Rat) *big.Int
	}{
		{"minimum", "<", "<", ceil},
		{"exclusiveMinimum", "<=", "<", func(r *big.Rat) *big.Int { return new(big.Int).Add(floor(r), big.NewInt(1)) }},
		{"maximum", ">", ">", floor},
		{"exclusiveMaximum", ">=", ">", func(r *big.Rat) *big.Int { return new(big.Int).Sub(ceil(r), big.NewInt(1)) }},
	} {
		v, ok := num(n, c.keyword)
		if !ok {
			continue
		}
		op, b := c.op, rat(v).Num()
		if r := rat(v); !r.IsInt() {
			op, b = c.fracOp, c.round(r)
		}
		var never, always bool
		switch op {
		case "<":
			never, always = b.Cmp(lo) <= 0, b.Cmp(hi) > 0
		case "<=":
			never, always = b.Cmp(lo) < 0, b.Cmp(hi) >= 0
		case ">":
			never, always = b.Cmp(hi) >= 0, b.Cmp(lo) < 0
		case ">=":
			never, always = b.Cmp(hi) > 0, b.Cmp(lo) <= 0
		}
		if !never {
			out = append(out, check{keyword: c.keyword, op: op, int: b, always: always})
		}
	}
	if v, ok := num(n, "multipleOf"); ok {
		p := rat(v).Num() // x / (p/q) is an integer exactly when p divides x (p/q in lowest terms)
		switch {
		case p.Cmp(big.NewInt(1)) == 0:
		case p.Cmp(hi) > 0:
			out = append(out, check{keyword: "multipleOf", nonZero: true})
		default:
			out = append(out, check{keyword: "multipleOf", int: p})
		}
	}
	if e := enumValues(n); e != nil {
		var values []any
		for _, v := range e.values {
			if nv, ok := v.(json.Number); ok {
				if r := rat(nv); r != nil && r.IsInt() && r.Num().Cmp(lo) >= 0 && r.Num().Cmp(hi) <= 0 {
					values = append(values, r.Num())
				}
			}
		}
		out = append(out, enumCheck(e.keyword, values))
	}
	return out
}

// floatChecks plans the checks of a float of b bits against n: each bound
// as the Go type holds it, beside its text, for the exact comparisons.
func (g *codecs) floatChecks(n node, b int, ptr string) []check {
	var out []check
	bound := func(v json.Number) float64 {
		f, _ := rat(v).Float64()
		if b == 32 {
			f32, _ := rat(v).Float32()
			f = float64(f32)
		}
		if math.IsInf(f, 0) {
			g.fail(ptr, "bound %s is beyond the range of a float%d", v, b)
		}
		return f
	}
	for _, kw := range []string{"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"} {
		if v, ok := num(n, kw); ok {
			out = append(out, check{keyword: kw, float: bound(v), text: string(v)})
		}
	}
	if v, ok := num(n, "multipleOf"); ok {
		out = append(out, check{keyword: "multipleOf", text: string(v)})
	}
	if e := enumValues(n); e != nil {
		var values []any
		for _, v := range e.values {
			if nv, ok := v.(json.Number); ok {
				values = append(values, nv)
			}
		}
		out = append(out, enumCheck(e.keyword, values))
	}
	return out
}

// needsLiteral reports whether float checks compare the number's literal
// (the exact ones), not only its value.
func needsLiteral(cs []check) bool {
	for _, c := range cs {
		switch c.keyword {
		case "minimum", "maximum", "multipleOf", "enum", "const":
			return true
		}
	}
	return false
}

// countChecks plans a container's size bounds (minItems and maxItems, or
// minProperties and maxProperties).
func countChecks(n node, minK, maxK string) []check {
	var out []check
	if v, ok := num(n, minK); ok {
		out = append(out, check{keyword: minK, op: "<", n: intOf(v)})
	}
	if v, ok := num(n, maxK); ok {
		out = append(out, check{keyword: maxK, op: ">", n: intOf(v)})
	}
	return out
}

// uniqueCheck plans uniqueItems on a list of elem, which generated code
// compares with ==: strings, integers and booleans only.
func (g *codecs) uniqueCheck(n node, elem types.Type, ptr string) []check {
	if n.UniqueItems == nil || !*n.UniqueItems {
		return nil
	}
	if !types.Comparable(elem) || isFloatish(elem) {
		g.fail(ptr, "uniqueItems on items of Go type %s cannot be checked by generated code (items must be strings, integers or booleans)", types.TypeString(elem, qualifier))
		return nil
	}
	return []check{{keyword: "uniqueItems"}}
}
