package runtime_test

import (
	"os/exec"
	"strings"
	"testing"
)

// A program that imports only runtime pulls in none of the provider
// adapters' or the MCP server's dependencies.
func TestRuntimeImportsNoAdapterDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == schemaModel {
			continue
		}
		for _, banned := range []string{"modelcontextprotocol", "openai", "anthropic", "keel/provider", "keel/mcpserver", "keel/internal/", "redis"} {
			if strings.Contains(dep, banned) {
				t.Errorf("runtime depends on %s", dep)
			}
		}
	}
}

// schemaModel is the one internal package runtime imports: the typed
// schema every reader of a schema shares. It is a leaf, so it brings in
// nothing of the generator's.
const schemaModel = "github.com/keelgen/keel/internal/schemamodel"

func TestSchemaModelIsALeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", schemaModel).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/keelgen/keel/") && dep != schemaModel {
			t.Errorf("schemamodel depends on %s", dep)
		}
	}
}
