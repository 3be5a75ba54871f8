package toolrules

// JSON Schema's patterns are ECMA-262 regular expressions (no flags); keel
// runs them on Go's RE2, whose linear-time engine it keeps. RE2 reads most
// of them alike, but not \s and \S (ECMA-262's white space includes U+00A0,
// U+2028, U+3000 and the other Unicode spaces; RE2's is ASCII), . (ECMA-262's
// stops at every line terminator; RE2's at \n only) and \uXXXX (ECMA-262's
// alone). ECMAPattern rewrites those, and refuses what the two read
// differently in a way it cannot rewrite: RE2's own syntax ((?flags), \A,
// \z, \Q, \pN, [[:alpha:]]), which ECMA-262 reads as something else or not
// at all, and \S inside a character class.

import (
	"fmt"
	"regexp"
	"strings"
)

// space is ECMA-262's WhiteSpace and LineTerminator, the members of \s, as
// an RE2 class body.
const space = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// notLineEnd is what ECMA-262's . matches: anything but a line terminator.
const notLineEnd = `[^\n\r\x{2028}\x{2029}]`

// ECMAPattern returns pattern, an ECMA-262 regular expression, in RE2 syntax
// with the same meaning, or an error that says which construct the two
// read differently and where (a byte offset).
func ECMAPattern(pattern string) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\':
			if i+1 == len(pattern) {
				return "", fmt.Errorf("a pattern cannot end in a lone backslash")
			}
			i++
			out, n, err := escape(pattern, i, inClass)
			if err != nil {
				return "", fmt.Errorf("at byte %d: %w", i-1, err)
			}
			b.WriteString(out)
			i += n
		case inClass:
			if c == ']' {
				inClass = false
			}
			if c == '[' && i+1 < len(pattern) && pattern[i+1] == ':' {
				return "", fmt.Errorf("at byte %d: [: is RE2's POSIX class syntax, which ECMA-262 reads as the characters [ and :; escape the [", i)
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
			// A ] right after [ or [^ is a character in RE2, and ECMA-262
			// reads [] as the empty class: refuse the difference.
			if j := i + 1 + boolInt(i+1 < len(pattern) && pattern[i+1] == '^'); j < len(pattern) && pattern[j] == ']' {
				return "", fmt.Errorf("at byte %d: a ] right after [ is a character to RE2 and closes the class to ECMA-262; escape it as \\]", j)
			}
		case c == '.':
			b.WriteString(notLineEnd)
		case c == '(' && i+1 < len(pattern) && pattern[i+1] == '?':
			rest := pattern[i+2:]
			switch {
			case strings.HasPrefix(rest, ":"), strings.HasPrefix(rest, "<") && !strings.HasPrefix(rest, "<=") && !strings.HasPrefix(rest, "<!"):
				b.WriteByte(c) // a non-capturing or a named group: read alike
			case strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, "!") || strings.HasPrefix(rest, "<=") || strings.HasPrefix(rest, "<!"):
				return "", fmt.Errorf("at byte %d: a lookaround, which RE2's linear-time engine does not have", i)
			default:
				return "", fmt.Errorf("at byte %d: (? with flags or P< is RE2's syntax, which ECMA-262 refuses", i)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// escape translates the escape whose letter is at pattern[i], returning
// its RE2 form and how many bytes past the letter it took.
func escape(pattern string, i int, inClass bool) (string, int, error) {
	switch c := pattern[i]; c {
	case 's':
		if inClass {
			return space, 0, nil
		}
		return "[" + space + "]", 0, nil
	case 'S':
		if inClass {
			return "", 0, fmt.Errorf(`\S inside a character class has no RE2 form; write (?:[...]|\S) instead`)
		}
		return "[^" + space + "]", 0, nil
	case 'u':
		hex := pattern[i+1 : min(i+5, len(pattern))]
		if len(hex) != 4 || strings.Trim(hex, "0123456789abcdefABCDEF") != "" {
			return "", 0, fmt.Errorf(`\u takes four hexadecimal digits`)
		}
		return `\x{` + hex + `}`, 4, nil
	case 'A', 'z', 'Q', 'E', 'C', 'p', 'P':
		return "", 0, fmt.Errorf(`\%c is RE2's syntax, which ECMA-262 reads otherwise`, c)
	}
	return `\` + string(pattern[i]), 0, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CompilePattern is ECMAPattern, then RE2's compile.
func CompilePattern(pattern string) (*regexp.Regexp, error) {
	translated, err := ECMAPattern(pattern)
	if err != nil {
		return nil, err
	}
	return regexp.Compile(translated)
}
