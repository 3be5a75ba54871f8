package gen_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The generator's stages import only downward: load and schema know the
// model, not each other; render knows neither; contract knows no stage; the
// shared go/types → jennifer code is below all of them.
func TestStagesImportDownward(t *testing.T) {
	const p = "github.com/keelgen/keel/internal/"
	forbidden := map[string][]string{
		"model":    {"load", "schema", "contract", "render", "gen", "output", "gocode"},
		"gocode":   {"load", "schema", "contract", "render", "gen", "output"},
		"load":     {"schema", "contract", "render", "gen", "output"},
		"schema":   {"load", "contract", "render", "gen", "output"},
		"contract": {"load", "schema", "render", "gen", "output"},
		"render":   {"load", "schema", "contract", "gen", "output"},
		"output":   {"load", "schema", "contract", "gen"},
	}
	for stage, not := range forbidden {
		out, err := exec.Command("go", "list", "-deps", p+stage).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", stage, err)
		}
		deps := strings.Fields(string(out))
		for _, n := range not {
			if slices.Contains(deps, p+n) {
				t.Errorf("internal/%s imports internal/%s", stage, n)
			}
		}
	}
}
