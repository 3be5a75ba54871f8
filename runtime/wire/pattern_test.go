package wire

import (
	"regexp"
	"testing"
)

// The scan agrees with regexp on every pattern and string below, and the
// shapes it takes are the ones it claims to.
func TestPatternAgreesWithRegexp(t *testing.T) {
	patterns := map[string]bool{ // pattern → scanned (not regexp)
		`^INC-[0-9]{3,}$`: true, `^[a-z]{2,3}[0-9]$`: true, `^a*b?c$`: true, `^(ab)[x-z]+$`: true,
		`^.{1,4}$`: true, `^$`: true, `^[^/]+/[^/]+$`: true, `^\d+(\.\d+)?$`: false,
		`^a*a$`: false, `^a*b?a$`: false, `INC`: false, `^(?i)inc$`: false, `^a|b$`: false,
		`^[a-z]{2,3}[a-z]$`: false, `^x{2}y{0,2}z$`: true,
	}
	inputs := []string{"", "a", "aa", "ab", "abc", "ac", "c", "INC-1", "INC-001", "INC-0012", "inc-001", "INC-001\n",
		"ab1", "abc1", "abcd1", "abx", "abxyz", "aby1", "a/b", "a//b", "/b", "12.5", "12.", "aaa", "aaba", "xxz", "xxyyz", "xxyyyz",
		"é", "éé", "\n", "1234", "12345", "\xff", "a\xffb/c"}
	for expr, scanned := range patterns {
		p := MustPattern(expr)
		if (p.steps != nil) != scanned {
			t.Errorf("%s: scanned %v, want %v", expr, p.steps != nil, scanned)
		}
		re := regexp.MustCompile(expr)
		for _, s := range inputs {
			if got, want := p.MatchString(s), re.MatchString(s); got != want {
				t.Errorf("%s on %q: %v, regexp says %v", expr, s, got, want)
			}
		}
	}
}

func FuzzPattern(f *testing.F) {
	f.Add(`^INC-[0-9]{3,}$`, "INC-001")
	f.Add(`^[a-z]{2,3}[0-9]?x*$`, "ab1xx")
	f.Fuzz(func(t *testing.T, expr, s string) {
		re, err := regexp.Compile(expr)
		if err != nil {
			return
		}
		if got, want := MustPattern(expr).MatchString(s), re.MatchString(s); got != want {
			t.Fatalf("%q on %q: %v, regexp says %v", expr, s, got, want)
		}
	})
}
