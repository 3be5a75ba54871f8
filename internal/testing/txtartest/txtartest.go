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
			got := run(t, sectionsOf(ar))
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
			if want := sectionsOf(ar)["want"]; got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// All reads every archive matching pattern: its sections by name, by the
// name Run gives its subtest. A test that prepares every case at once
// (one module for all) reads them with it.
func All(pattern string) (map[string]map[string]string, error) {
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	all := map[string]map[string]string{}
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			return nil, err
		}
		all[strings.TrimSuffix(filepath.Base(file), ".txtar")] = sectionsOf(ar)
	}
	return all, nil
}

func sectionsOf(ar *txtar.Archive) map[string]string {
	sections := map[string]string{}
	for _, f := range ar.Files {
		sections[f.Name] = string(f.Data)
	}
	return sections
}
