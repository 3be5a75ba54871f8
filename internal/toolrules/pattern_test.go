package toolrules_test

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/toolrules"
)

// A translated pattern matches what an ECMA-262 engine (Node.js's, V8,
// with the u flag, as JSON Schema validators read patterns) matches, on
// every string of the table: the Unicode spaces JSON Schema's \s has and
// RE2's lacks, the line terminators ECMA's . stops at, \u escapes.
func TestTranslatedPatternsMatchAsECMA262Does(t *testing.T) {
	patterns := []string{`^\S+$`, `^\s*$`, `^a.b$`, `^[\s,]+$`, `^[^\s]+$`, `\u00e9`, `^[\u0041-\u005A]+$`, `^\d{3}-\w+$`, `^(?:ab|cd)+$`, `^(?<year>\d{4})$`, `a\.b`, `^\bx\b`}
	strs := []string{"", "a", "ab", "a b", "a\u00a0b", "a\u2003b", "a\u3000b", "a\u2028b", "a\nb", "a\rb", "a\tb", "\u00a0", " \t\n", "é", "ABC", "abc", "123-x_1",
		"abcdab", "2026", "a.b", "axb", "x", " x ", "\ufeff", "a\u0085b", "a\u180eb"}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH: the ECMA-262 oracle is Node.js's engine (.ci/run has it)")
	}
	in, _ := json.Marshal(map[string][]string{"patterns": patterns, "strings": strs})
	cmd := exec.Command(node, "-e", `let d="";process.stdin.on("data",c=>d+=c).on("end",()=>{const {patterns,strings}=JSON.parse(d);`+
		`console.log(JSON.stringify(patterns.map(p=>{const r=new RegExp(p,"u");return strings.map(s=>r.test(s))})))})`)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var ecma [][]bool
	if err := json.Unmarshal(out, &ecma); err != nil || len(ecma) != len(patterns) {
		t.Fatalf("node said %s (%v)", out, err)
	}
	for i, p := range patterns {
		translated, err := toolrules.ECMAPattern(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		re := regexp.MustCompile(translated)
		for j, s := range strs {
			if got, want := re.MatchString(s), ecma[i][j]; got != want {
				t.Errorf("%s (as %s) on %q: %v, ECMA-262 %v", p, translated, s, got, want)
			}
		}
	}
}

// What RE2 and ECMA-262 read differently, and cannot be rewritten, is
// refused with where and why; never passed on with another meaning.
func TestWhatReadsOtherwiseIsRefused(t *testing.T) {
	for p, why := range map[string]string{
		`^(?i)abc$`:   "(? with flags",
		`\Aabc\z`:     `\A is RE2's syntax`,
		`\pL+`:        `\p is RE2's syntax`,
		`[[:alpha:]]`: "POSIX class",
		`[a\S]`:       `\S inside a character class`,
		`a(?=b)`:      "lookaround",
		`[]a]`:        "a ] right after [",
		`\u12`:        "four hexadecimal digits",
		`abc\`:        "lone backslash",
		`(?P<name>a)`: "(? with flags or P<",
		`\Qa.b\E`:     `\Q is RE2's syntax`,
		`x[^]y`:       "a ] right after [",
		`(?<!a)b`:     "lookaround",
		`[\u0041-\Z]`: "",
		`\u004G`:      "four hexadecimal digits",
	} {
		_, err := toolrules.ECMAPattern(p)
		if why == "" {
			continue
		}
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want %q", p, err, why)
		}
	}
}
