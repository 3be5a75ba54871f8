package gen

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

// selectTools keeps only the named tools; a name no package declares, or
// one named twice, is an error.
func selectTools(pkg *model.Package, names []string) error {
	if len(names) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, n := range names {
		if want[n] {
			return fmt.Errorf("-tools names %s twice", n)
		}
		want[n] = true
	}
	var kept []*model.Tool
	for _, t := range pkg.Tools {
		if want[t.Name] {
			kept = append(kept, t)
			delete(want, t.Name)
		}
	}
	if len(want) > 0 {
		return fmt.Errorf("-tools names %s, which no package declares", strings.Join(slices.Sorted(maps.Keys(want)), ", "))
	}
	pkg.Tools = kept
	return nil
}

// deferTools marks the tools of the set named by deferred ("*": all) and
// not by upfront; a name the set does not have is an error.
func deferTools(pkg *model.Package, deferred, upfront []string) error {
	has := map[string]bool{}
	for _, t := range pkg.Tools {
		has[t.Name] = true
	}
	for flag, names := range map[string][]string{"-defer": deferred, "-upfront": upfront} {
		for _, n := range names {
			if n != "*" && !has[n] || n == "*" && flag == "-upfront" {
				return fmt.Errorf("%s names %s, which is not a tool of this set", flag, n)
			}
		}
	}
	for _, t := range pkg.Tools {
		if (slices.Contains(deferred, "*") || slices.Contains(deferred, t.Name)) && !slices.Contains(upfront, t.Name) {
			t.Deferred, t.Namespace = true, t.PkgName
		}
	}
	return nil
}
