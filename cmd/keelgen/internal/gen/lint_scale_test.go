package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/testing/cputime"
)

// lintSet is a package of n tools whose handler packages export 10·n
// names; each description names three of them among ordinary words, as a
// large real set does.
func lintSet(n int) *model.Package {
	pkg := &model.Package{}
	for i := range 10 * n {
		pkg.Exported = append(pkg.Exported, fmt.Sprintf("Ident%d", i))
	}
	for i := range n {
		desc := fmt.Sprintf("Looks up an incident by its id and returns an Ident%d, an Ident%d and the Ident%d of its service, "+
			"with the time it was opened and the people on call for it, for the model to read.", i, n+i, 2*n+i)
		pkg.Tools = append(pkg.Tools, &model.Tool{Name: fmt.Sprintf("tool_%d", i), Func: fmt.Sprintf("Tool%d", i), Description: desc,
			Form: model.PlainParams, Params: []model.Param{{Name: "incidentID", JSONName: "incident_id", Description: "the incident"}}})
	}
	return pkg
}

// keelgen's lint once compiled a regexp per (description, exported name)
// pair, even without -lint (for the summary line): quadratic in a set's
// size, 17.5 of 19 s of a 1,000-tool run. The work must follow the text:
// ten times the tools (and names) may cost about ten times as much. A
// same-run ratio, so a slow machine does not trip it: linear reads 15 to
// 20 (the larger maps miss the cache more), quadratic over 100.
func TestLintIsLinearInTheSet(t *testing.T) {
	if testing.Short() {
		t.Skip("measures; run without -short")
	}
	perRun := func(n int) float64 {
		pkg := lintSet(n)
		got := lint(pkg, nil)
		if want := 3 * n; strings.Count(fmt.Sprint(got), "names the Go identifier") != want {
			t.Fatalf("N=%d: %d identifier warnings, want %d", n, len(got), want)
		}
		// The fastest CPU time of a fixed number of runs after one to warm
		// the heap, about a third of a second at each size: another
		// process on the machine adds no CPU time to a run, and a
		// quadratic pass is far over the bound.
		lint(pkg, nil)
		return float64(cputime.Fastest(30_000/n, func() { lint(pkg, nil) }))
	}
	small, large := perRun(100), perRun(1000)
	ratio := large / small
	t.Logf("lint: %.0f µs at 100 tools, %.0f µs at 1,000: ×%.1f", small/1e3, large/1e3, ratio)
	if ratio > 40 {
		t.Errorf("lint at 1,000 tools costs ×%.1f its cost at 100 (linear reads 15 to 20): a pass is no longer linear in the set", ratio)
	}
}
