// Package txtartest runs golden cases kept as txtar archives: each archive
// holds its inputs as sections and, in its "want" section, the expected
// output, which -update rewrites.
package txtartest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// Run runs one parallel subtest per file matching pattern: run gets the
// archive's sections by name and returns what it got, which must equal the
// "want" section; with update, it becomes the "want" section.
func Run(t *testing.T, pattern string, update bool, run func(t *testing.T, sections map[string]string) string) {
	t.Helper()
	cases, err := filepath.Glob(pattern)
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases match %s: %v", pattern, err)
	}
	for _, file := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sections := map[string]string{}
			for _, f := range ar.Files {
				sections[f.Name] = string(f.Data)
			}
			got := run(t, sections)
			if update {
				for i := range ar.Files {
					if ar.Files[i].Name == "want" {
						ar.Files[i].Data = []byte(got)
					}
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != sections["want"] {
				t.Errorf("got:\n%s\nwant:\n%s", got, sections["want"])
			}
		})
	}
}
