package gen_test

import (
	"strings"
	"testing"

	"github.com/keelgen/keel/cmd/keelgen/internal/contract"
	"github.com/keelgen/keel/cmd/keelgen/internal/gen"
)

// -defer marks the set's tools a model loads on demand, grouped by handler
// package; -upfront keeps some up front. The lock records it and the review
// diff shows what every request carries up front against what loads on
// demand. A name the set does not have is an error.
func TestDeferredTools(t *testing.T) {
	res, err := gen.Generate(gen.Config{Dir: "testdata/golden/mixed/in", OutDir: t.TempDir(), OutPkg: "out",
		Defer: []string{"*"}, Upfront: []string{"search"}, Shared: golden(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Writable() {
		t.Fatal(res.Diagnostics)
	}
	upfront, deferred := 0, 0
	for _, lt := range res.Lock.Tools {
		switch {
		case lt.Name == "search" && !lt.Deferred:
			upfront += lt.ModelBytes
		case lt.Name != "search" && lt.Deferred && lt.Namespace == "in":
			deferred += lt.ModelBytes
		default:
			t.Errorf("%s: deferred %v, namespace %q", lt.Name, lt.Deferred, lt.Namespace)
		}
	}
	diff := contract.Diff(res.Previous, res.Lock, res.Changes)
	if !strings.Contains(diff, "up front: ") || !strings.Contains(diff, "over 3 deferred tools") {
		t.Fatalf("the diff does not split the budget:\n%s", diff)
	}
	if _, err := gen.Generate(gen.Config{Dir: "testdata/golden/mixed/in", OutDir: t.TempDir(), OutPkg: "out", Defer: []string{"nope"}, Shared: golden(t)}); err == nil ||
		!strings.Contains(err.Error(), "-defer names nope") {
		t.Fatalf("-defer of an unknown tool: %v", err)
	}
	if upfront == 0 || deferred == 0 {
		t.Fatalf("budgets up front %d, deferred %d", upfront, deferred)
	}
}
