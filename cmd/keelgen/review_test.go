package main

import (
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/testing/testmod"
)

// The reviewer's view of a pull request whose generated files are already
// regenerated: -base reads the base revision's lock and schema files from
// git, so -diff names the added field, not a digest; and one line checks
// every set of the module with its own go:generate flags.
func TestReviewAgainstBaseRevision(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	dir := testmod.New(t, map[string]string{"notes/notes.go": withGenerate(userHandlers)})
	testmod.MustGo(t, dir, "generate", "./...")
	git := func(args ...string) string {
		t.Helper()
		out, err := testmod.Git(dir, args...)
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")

	// The author adds a required field, bumps the major version and
	// regenerates.
	changed := strings.Replace(userHandlers, "type ForecastArgs struct {", "type ForecastArgs struct {\n\t// Units are metric or imperial.\n\tUnits string `json:\"units\"`", 1)
	changed = strings.Replace(changed, "name=get_forecast version=2.0", "name=get_forecast version=3.0", 1)
	testmod.Write(t, dir, map[string]string{"notes/notes.go": withGenerate(changed)})
	testmod.MustGo(t, dir, "generate", "./...")
	git("add", "-A")
	git("commit", "-q", "-m", "the pull request")

	out, err := keelgenIn(dir, "-diff", "-base", "HEAD~1", "-out", "notetools", "./notes")
	if err == nil || !strings.Contains(out, `input: field "units" added, required`) || strings.Contains(out, "missing or differs") {
		t.Fatalf("-diff -base HEAD~1 after regenerating: err %v\n%s", err, out)
	}
	// Without the bump, -check -base refuses, naming the base's lock.
	unbumped := strings.Replace(changed, "version=3.0", "version=2.0", 1)
	testmod.Write(t, dir, map[string]string{"notes/notes.go": withGenerate(unbumped)})
	out, err = keelgenIn(dir, "-check", "-base", "HEAD~1", "-out", "notetools", "./notes")
	if err == nil || !strings.Contains(out, `input schema changed since HEAD~1's keel.lock.json (field "units" added, required); bump version`) ||
		strings.Contains(out, "nothing written") {
		t.Fatalf("-check -base HEAD~1 without a bump: err %v\n%s", err, out)
	}
	testmod.Write(t, dir, map[string]string{"notes/notes.go": withGenerate(changed)})

	// The one CI line: current, then stale.
	ci := []string{"KEELGEN_MODE=check"}
	if out, err := testmod.GoEnv(dir, ci, "generate", "-run", "keelgen", "./..."); err != nil {
		t.Fatalf("KEELGEN_MODE=check go generate on a current set: %v\n%s", err, out)
	}
	stale := strings.Replace(changed, "// GetForecast returns the forecast for a city.", "// GetForecast returns the weather for a city.", 1)
	testmod.Write(t, dir, map[string]string{"notes/notes.go": withGenerate(stale)})
	if out, err := testmod.GoEnv(dir, ci, "generate", "-run", "keelgen", "./..."); err == nil || !strings.Contains(out, "description changed since keel.lock.json") {
		t.Fatalf("KEELGEN_MODE=check go generate on a stale set: %v\n%s", err, out)
	}
	if git("status", "--porcelain") != "M notes/notes.go" {
		t.Fatalf("the check wrote files:\n%s", git("status", "--porcelain"))
	}
}
