package wire

import "bytes"

// MaxNumberLength bounds a number literal's length in bytes. No Go number
// needs more: a float64's exact decimal expansion has at most 767
// significant digits. Arbitrary-precision arithmetic on a literal (the
// validator of a hand-bound set, a Cedar decimal) costs quadratic time in
// its length, so every path refuses a longer one before any of it runs.
const MaxNumberLength = 1000

// NumberProblem says why a number literal is refused before any arithmetic
// ("" when it is not): longer than MaxNumberLength, or an exponent of four
// digits or more, which no Go number holds and which makes math/big spend
// minutes (1e99999999) or panic (1e-99999999 under multipleOf).
func NumberProblem(lit []byte) string {
	if len(lit) > MaxNumberLength {
		return "a number literal longer than 1000 bytes"
	}
	if i := bytes.IndexAny(lit, "eE"); i >= 0 {
		exp := bytes.TrimLeft(bytes.TrimLeft(lit[i+1:], "+-"), "0")
		if len(exp) >= 4 {
			return "a number with an exponent beyond any Go number's range"
		}
	}
	return ""
}

// scanRaw reads a valid JSON value once for its nesting depth and the
// first of its numbers that NumberProblem refuses ("" when none).
func scanRaw(v []byte) (depth int, number string) {
	cur, inString, escaped, start := 0, false, false, -1
	for i, c := range v {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || (c >= '0' && c <= '9'):
			if start < 0 {
				start = i
			}
			continue
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			cur++
			depth = max(depth, cur)
		case c == '}' || c == ']':
			cur--
		}
		if start >= 0 {
			if p := NumberProblem(v[start:i]); p != "" && number == "" {
				number = p
			}
			start = -1
		}
	}
	if start >= 0 && number == "" {
		number = NumberProblem(v[start:])
	}
	return depth, number
}
