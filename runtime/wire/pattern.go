package wire

import (
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// Pattern is a compiled "pattern" keyword: Go's RE2 syntax and an
// unanchored search, as the validator has it. A pattern of the common
// shape, anchored at both ends and made of characters and character
// classes each with a repeat count, where taking as many characters as
// possible can never be wrong, runs as one scan of the string; any other
// pattern runs on regexp.
type Pattern struct {
	re    *regexp.Regexp
	steps []step // nil: not of that shape
}

// step is one character class taken min to max times (max < 0: no bound).
type step struct {
	ranges   []rune // pairs lo, hi
	min, max int
}

// MustPattern compiles expr, which keelgen has already compiled.
func MustPattern(expr string) *Pattern {
	p := &Pattern{re: regexp.MustCompile(expr)}
	if re, err := syntax.Parse(expr, syntax.Perl); err == nil {
		p.steps = scanSteps(re)
	}
	return p
}

// MatchString reports whether s contains a match of the pattern.
func (p *Pattern) MatchString(s string) bool {
	if p.steps == nil {
		return p.re.MatchString(s)
	}
	for _, st := range p.steps {
		n := 0
		for (st.max < 0 || n < st.max) && len(s) > 0 {
			r, size := utf8.DecodeRuneInString(s)
			if !in(st.ranges, r) {
				break
			}
			s, n = s[size:], n+1
		}
		if n < st.min {
			return false
		}
	}
	return s == ""
}

func in(ranges []rune, r rune) bool {
	for i := 0; i < len(ranges); i += 2 {
		if ranges[i] <= r && r <= ranges[i+1] {
			return true
		}
	}
	return false
}

// scanSteps turns ^ atom{m,n} ... $ into steps, or returns nil.
func scanSteps(re *syntax.Regexp) []step {
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return nil
	}
	subs := re.Sub
	if subs[0].Op != syntax.OpBeginText || subs[len(subs)-1].Op != syntax.OpEndText {
		return nil
	}
	var steps []step
	for _, sub := range subs[1 : len(subs)-1] {
		more, ok := atomSteps(sub)
		if !ok {
			return nil
		}
		steps = append(steps, more...)
	}
	// Greedy is exact when no step can take a character that a following
	// step, up to the first one that must take one, could take instead.
	for i, st := range steps {
		if st.min == st.max {
			continue
		}
		for _, next := range steps[i+1:] {
			if overlap(st.ranges, next.ranges) {
				return nil
			}
			if next.min > 0 {
				break
			}
		}
	}
	if steps == nil {
		steps = []step{}
	}
	return steps
}

func atomSteps(re *syntax.Regexp) ([]step, bool) {
	if re.Flags&syntax.FoldCase != 0 {
		return nil, false
	}
	switch re.Op {
	case syntax.OpLiteral:
		var out []step
		for _, r := range re.Rune {
			out = append(out, step{ranges: []rune{r, r}, min: 1, max: 1})
		}
		return out, true
	case syntax.OpCharClass, syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return []step{{ranges: class(re), min: 1, max: 1}}, true
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		one := re.Sub[0]
		if one.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		var ranges []rune
		switch {
		case one.Op == syntax.OpLiteral && len(one.Rune) == 1:
			ranges = []rune{one.Rune[0], one.Rune[0]}
		case one.Op == syntax.OpCharClass || one.Op == syntax.OpAnyCharNotNL || one.Op == syntax.OpAnyChar:
			ranges = class(one)
		default:
			return nil, false
		}
		st := step{ranges: ranges, min: re.Min, max: re.Max}
		switch re.Op {
		case syntax.OpStar:
			st.min, st.max = 0, -1
		case syntax.OpPlus:
			st.min, st.max = 1, -1
		case syntax.OpQuest:
			st.min, st.max = 0, 1
		}
		return []step{st}, true
	case syntax.OpCapture:
		if re.Sub[0].Op == syntax.OpConcat {
			var out []step
			for _, s := range re.Sub[0].Sub {
				more, ok := atomSteps(s)
				if !ok {
					return nil, false
				}
				out = append(out, more...)
			}
			return out, true
		}
		return atomSteps(re.Sub[0])
	}
	return nil, false
}

func class(re *syntax.Regexp) []rune {
	switch re.Op {
	case syntax.OpAnyCharNotNL:
		return []rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}
	case syntax.OpAnyChar:
		return []rune{0, utf8.MaxRune}
	}
	return re.Rune
}

func overlap(a, b []rune) bool {
	for i := 0; i < len(a); i += 2 {
		for j := 0; j < len(b); j += 2 {
			if a[i] <= b[j+1] && b[j] <= a[i+1] {
				return true
			}
		}
	}
	return false
}
