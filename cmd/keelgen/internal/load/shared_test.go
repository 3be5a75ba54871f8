package load

import (
	"path/filepath"
	"testing"
)

// A shared run's pattern matches its directory, or its tree with /...,
// never a sibling whose name starts the same.
func TestSharedPatternsMatchDirectories(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "case", "in")
	for _, c := range []struct {
		run  Run
		dir  string
		want bool
	}{
		{Run{Dir: filepath.Join(root, "case"), Patterns: []string{"./in"}}, in, true},
		{Run{Dir: filepath.Join(root, "case"), Patterns: []string{"./in"}}, filepath.Join(in, "sub"), false},
		{Run{Dir: filepath.Join(root, "case"), Patterns: []string{"./in/..."}}, filepath.Join(in, "sub"), true},
		{Run{Dir: filepath.Join(root, "case"), Patterns: []string{"./in/..."}}, in + "ner", false},
		{Run{Dir: in}, in, true},
		{Run{Dir: in}, filepath.Join(in, "sub"), false},
	} {
		if got := matches(c.run, c.dir); got != c.want {
			t.Errorf("%v matches %s: %v, want %v", c.run, c.dir, got, c.want)
		}
	}
	if _, err := Share([]Run{{Dir: root, Patterns: []string{"example.com/user/h"}}}); err == nil {
		t.Error("Share took an import path for a pattern")
	}
}
