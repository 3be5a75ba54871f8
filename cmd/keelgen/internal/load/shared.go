package load

import (
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

// Shared is the packages of many runs read by one go/packages call: each
// run's model is then built in process from the packages its patterns
// match. keelgen's tests run the generator over dozens of small packages
// of one module, where a go list per run was most of their time.
type Shared struct {
	pkgs []*packages.Package
}

// Run is one run's directory and patterns, as Load takes them.
type Run struct {
	Dir      string
	Patterns []string
}

// Share reads the packages of every run, all in one module, at once.
func Share(runs []Run) (*Shared, error) {
	if len(runs) == 0 {
		return &Shared{}, nil
	}
	var patterns []string
	for _, r := range runs {
		for _, p := range patternsOf(r) {
			if !strings.HasPrefix(p, ".") {
				return nil, fmt.Errorf("a shared run's pattern is a directory (., ./h, ./in/...), not %s", p)
			}
			patterns = append(patterns, filepath.Join(absolute(r.Dir), filepath.FromSlash(p))) // Join keeps a tree's /...
		}
	}
	pkgs, err := read(absolute(runs[0].Dir), patterns)
	if err != nil {
		return nil, err
	}
	return &Shared{pkgs: pkgs}, nil
}

// Load is Load of one of the runs given to Share, without the go command.
func (s *Shared) Load(dir string, patterns ...string) (*model.Package, []model.Diagnostic, error) {
	run := Run{Dir: dir, Patterns: patterns}
	var matched []*packages.Package
	for _, pkg := range s.pkgs {
		if matches(run, pkg.Dir) {
			matched = append(matched, pkg)
		}
	}
	if len(matched) == 0 {
		return nil, nil, fmt.Errorf("%s in %s matched none of the shared packages (was the run given to Share?)", strings.Join(patternsOf(run), " "), dir)
	}
	return build(matched)
}

// matches reports whether a package in pkgDir is one of run's: a pattern
// is a directory, or a tree of them (./in/...).
func matches(run Run, pkgDir string) bool {
	for _, p := range patternsOf(run) {
		tree := strings.HasSuffix(p, "/...")
		root := filepath.Join(absolute(run.Dir), filepath.FromSlash(strings.TrimSuffix(p, "/...")))
		if pkgDir == root || tree && strings.HasPrefix(pkgDir, root+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func patternsOf(r Run) []string {
	if len(r.Patterns) == 0 {
		return []string{"."}
	}
	return r.Patterns
}

func absolute(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	return abs
}
