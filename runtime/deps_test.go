package runtime_test

import (
	"os/exec"
	"strings"
	"testing"
)

// A program that imports only runtime pulls in none of the provider
// adapters' or the MCP server's dependencies.
func TestRuntimeImportsNoAdapterDependencies(t *testing.T) {
	t.Parallel()
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
// reader of a schema shares, the lock the executor verifies at start, the
// rules a tool's declaration follows (which keelgen checks too), and what
// keel's servers ask an executor, and the question a person reads to
// approve a call, and the formats held to their RFCs. Each is a leaf (of
// keel's packages it imports only these), so it brings in nothing of the
// generator's.
var leaves = map[string]bool{
	"github.com/keelgen/keel/internal/schemamodel": true,
	"github.com/keelgen/keel/internal/lockfile":    true,
	"github.com/keelgen/keel/internal/toolrules":   true,
	"github.com/keelgen/keel/internal/execinfo":    true,
	"github.com/keelgen/keel/internal/question":    true,
	"github.com/keelgen/keel/internal/formats":     true,
}

func TestInternalImportsAreLeaves(t *testing.T) {
	t.Parallel()
	args := []string{"list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}
	for leaf := range leaves {
		args = append(args, leaf)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	listed := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		leaf, deps, _ := strings.Cut(line, " ")
		if !leaves[leaf] {
			t.Fatalf("go list printed %q", line)
		}
		listed++
		for _, dep := range strings.Fields(deps) {
			if strings.HasPrefix(dep, "github.com/keelgen/keel/") && !leaves[dep] {
				t.Errorf("%s depends on %s", leaf, dep)
			}
		}
	}
	if listed != len(leaves) {
		t.Fatalf("go list printed %d of %d leaves:\n%s", listed, len(leaves), out)
	}
}
