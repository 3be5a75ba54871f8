package gen_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/keelgen/keel/cmd/keelgen/internal/files"
	"github.com/keelgen/keel/cmd/keelgen/internal/gen"
)

// A field inserted in the middle of one tool's arguments, and a field
// removed from another tool's result, change keel_codecs.go only where those
// members are read, written and shape-checked: no presence flag is
// renumbered and no function of another member or tool is renamed (the
// shared type Text has a schema per place, named after the place).
func TestGeneratedDiffTouchesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	shared := golden(t)
	codecs := func(dir string) []string {
		t.Helper()
		res, err := gen.Generate(gen.Config{Dir: dir, OutDir: t.TempDir(), OutPkg: "out", Shared: shared})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Writable() {
			t.Fatalf("%s: %v", dir, res.Diagnostics)
		}
		for _, f := range res.Files {
			if f.Path == files.CodecFileName {
				var lines []string
				for _, l := range strings.Split(string(f.Content), "\n") {
					if strings.Contains(l, "testdata/stability/") {
						continue // the two packages' own import paths
					}
					lines = append(lines, strings.Join(strings.Fields(l), " ")) // gofmt's column alignment aside
				}
				return lines
			}
		}
		t.Fatal("no codecs file")
		return nil
	}
	removed, added := lineDiff(codecs("testdata/stability/before"), codecs("testdata/stability/after"))
	if len(added) == 0 || len(removed) == 0 {
		t.Fatalf("the change changed nothing: -%d +%d", len(removed), len(added))
	}
	for _, c := range []struct {
		sign  string
		lines []string
		about *regexp.Regexp
	}{
		{"+", added, regexp.MustCompile(`(?i)region`)},
		{"-", removed, regexp.MustCompile(`(?i)summary`)},
	} {
		for _, l := range c.lines {
			if !c.about.MatchString(l) && !generic(l) {
				t.Errorf("%s%s: a line about another member or tool changed\n-%s\n+%s", c.sign, l, strings.Join(removed, "\n-"), strings.Join(added, "\n+"))
			}
		}
	}
}

// genericWords may stand in a changed line that names no member: the
// frame of a case, a check or a function.
var genericWords = map[string]bool{"if": true, "err": true, "return": true, "nil": true, "wire": true, "Duplicate": true,
	"true": true, "seen": true, "d": true, "v": true, "e": true, "s": true, "bool": true, "string": true, "error": true,
	"Decoder": true, "Encoder": true, "String": true, "Fail": true, "maxLength": true, "func": true,
	"x": true, "Null": true, "continue": true, "Length": true, "At": true, "m": true, "OmitEmpty": true}

func generic(line string) bool {
	if regexp.MustCompile(`\[\d+\]`).MatchString(line) {
		return false // a positional index (seen[2]) shifts with every member before it
	}
	for _, w := range regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`).FindAllString(line, -1) {
		if !genericWords[w] {
			return false
		}
	}
	return true
}

// lineDiff is a longest-common-subsequence diff: the lines only a has, and
// the lines only b has, in order.
func lineDiff(a, b []string) (onlyA, onlyB []string) {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			onlyA = append(onlyA, a[i])
			i++
		default:
			onlyB = append(onlyB, b[j])
			j++
		}
	}
	return append(onlyA, a[i:]...), append(onlyB, b[j:]...)
}
