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
		if leaves[dep] {
			continue
		}
		for _, banned := range []string{"modelcontextprotocol", "openai", "anthropic", "keel/provider", "keel/mcpserver", "keel/internal/", "redis"} {
			if strings.Contains(dep, banned) {
				t.Errorf("runtime depends on %s", dep)
			}
		}
	}
}

// leaves are the internal packages runtime imports: the typed schema every
// reader of a schema shares, and the lock the executor verifies at start.
// Each is a leaf, so it brings in nothing of the generator's.
var leaves = map[string]bool{
	"github.com/keelgen/keel/internal/schemamodel": true,
	"github.com/keelgen/keel/internal/lockfile":    true,
}

func TestInternalImportsAreLeaves(t *testing.T) {
	for leaf := range leaves {
		out, err := exec.Command("go", "list", "-deps", leaf).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/keelgen/keel/") && dep != leaf {
				t.Errorf("%s depends on %s", leaf, dep)
			}
		}
	}
}
