package gen

import (
	"slices"
	"strings"

	"github.com/keelgen/keel/cmd/keelgen/internal/load"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/cmd/keelgen/internal/schema"
)

// Shared is what many runs of Generate over packages of one module share:
// one go/packages call reads them all and one schema program reflects
// them all, and each run builds the rest in process. keelgen's tests run
// Generate over dozens of small cases, where starting go commands for
// each run was most of their time. A run gets it in Config.Shared.
type Shared struct {
	loaded    *load.Shared
	reflected map[string]schema.Reflected // by the run's package paths
}

// Share reads and reflects the packages of runs, all in one module. A run
// whose packages have problems is read, and reflects nothing: Generate
// stops at its diagnostics.
func Share(runs []load.Run) (*Shared, error) {
	loaded, err := load.Share(runs)
	if err != nil {
		return nil, err
	}
	s := &Shared{loaded: loaded, reflected: map[string]schema.Reflected{}}
	var pkgs []*model.Package
	var keys []string
	for _, r := range runs {
		pkg, diags, err := loaded.Load(r.Dir, r.Patterns...)
		if err != nil {
			return nil, err
		}
		if len(diags) > 0 || len(pkg.Tools) == 0 && len(pkg.Forms) == 0 || slices.Contains(keys, pathsOf(pkg)) {
			continue
		}
		pkgs, keys = append(pkgs, pkg), append(keys, pathsOf(pkg))
	}
	reflected, err := schema.Batch(pkgs)
	if err != nil {
		return nil, err
	}
	for i, key := range keys {
		s.reflected[key] = reflected[i]
	}
	return s, nil
}

// Schemas is the schema stage of a shared run: what the batch reflected,
// finished as schema.Program finishes its own.
func (s *Shared) Schemas(pkg *model.Package) (map[string]model.Schemas, []model.Diagnostic, error) {
	if len(pkg.Tools) == 0 && len(pkg.Forms) == 0 {
		return map[string]model.Schemas{}, nil, nil
	}
	r, ok := s.reflected[pathsOf(pkg)]
	if !ok {
		return schema.Program{}.Schemas(pkg) // a run Share was not given
	}
	return r.Schemas(pkg)
}

func pathsOf(pkg *model.Package) string { return strings.Join(pkg.Paths, " ") }
