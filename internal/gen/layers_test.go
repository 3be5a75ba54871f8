package gen_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The generator's stages import only downward: load and schema know the
// model, not each other; render knows neither; contract knows no stage; the
// shared go/types → jennifer code is below all of them. No exceptions: the
// loader needs no jennifer (HasMethod lives in model), output no render
// (file names live in files), and the generator core no provider adapter
// (the forms -targets checks live in forms).
func TestStagesImportDownward(t *testing.T) {
	const p = "github.com/keelgen/keel/internal/"
	const jennifer = "github.com/dave/jennifer/jen"
	adapters := []string{"github.com/keelgen/keel/provider/openai", "github.com/keelgen/keel/provider/ollama", "github.com/keelgen/keel/provider/anthropic"}
	stages := []string{"load", "schema", "contract", "render", "gen", "output"}
	forbidden := map[string][]string{
		"files":    append(paths(p, "model", "gocode", "forms", "schemajson"), paths(p, stages...)...),
		"forms":    append(paths(p, "model", "gocode", "files"), paths(p, stages...)...),
		"model":    append(paths(p, "gocode", "files", "forms"), append(paths(p, stages...), jennifer)...),
		"gocode":   paths(p, stages...),
		"load":     append(paths(p, "schema", "contract", "render", "gen", "output", "gocode", "forms"), jennifer),
		"schema":   paths(p, "load", "contract", "render", "gen", "output"),
		"contract": paths(p, "load", "schema", "render", "gen", "output"),
		"render":   paths(p, "load", "schema", "contract", "gen", "output"),
		"output":   paths(p, "load", "schema", "contract", "gen", "render", "gocode"),
		"gen":      adapters,
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
			if slices.Contains(deps, n) {
				t.Errorf("internal/%s imports %s", stage, strings.TrimPrefix(n, p))
			}
		}
	}
}

func paths(prefix string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}
