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
	args := []string{"list", "-deps=false", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}
	for stage := range forbidden {
		args = append(args, p+stage)
	}
	out, err := exec.Command("go", args...).Output() // one go command for every stage
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		stage, deps := strings.TrimPrefix(fields[0], p), fields[1:]
		for _, n := range forbidden[stage] {
			if slices.Contains(deps, p+n) {
				t.Errorf("internal/%s imports internal/%s", stage, n)
			}
		}
	}
}
