package contract_test

import (
	"encoding/json"
	"flag"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/keelgen/keel/cmd/keelgen/internal/contract"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/lockfile"
	"github.com/keelgen/keel/internal/testing/txtartest"
	"github.com/keelgen/keel/runtime"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/*.txtar")

// tool is one tool of a case: its contract and schemas, and the line of its
// directive in the handler file (h/h.go) the diagnostics point at.
type tool struct {
	Name        string          `json:"name"`
	Version     string          `json:"version"`
	Effect      string          `json:"effect"`
	Description string          `json:"description"`
	Errors      []string        `json:"errors,omitempty"`
	Input       json.RawMessage `json:"input"`
	Output      json.RawMessage `json:"output"`
	Line        int             `json:"line"`
}

func (t tool) info() runtime.ToolInfo {
	info := runtime.ToolInfo{Name: t.Name, Version: t.Version, Effect: runtime.Effect(t.Effect), Description: t.Description,
		InputSchema: t.Input, OutputSchema: t.Output}
	for _, c := range t.Errors {
		info.Errors = append(info.Errors, runtime.Code(c))
	}
	return info
}

// Each testdata/*.txtar is a tool set before (old.json: what the committed
// lock and schema files describe) and after (new.json) a change, and in
// "want" the version gate's refusals and warnings and the review diff. The
// schemas are what keelgen generated from Go types (cmd/keelgen/internal/gen's contract
// cases run that whole path on a few of them).
func TestContractCases(t *testing.T) {
	txtartest.Run(t, "testdata/*.txtar", *update, func(t *testing.T, sections map[string]string) string {
		var old, now []tool
		if err := json.Unmarshal([]byte(sections["old.json"]), &old); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(sections["new.json"]), &now); err != nil {
			t.Fatal(err)
		}
		return run(t, old, now)
	})
}

// run commits old as keelgen would (lock and schema files), compares now
// with it, gates the versions and renders the review diff.
func run(t *testing.T, old, now []tool) string {
	t.Helper()
	dir := t.TempDir()
	var infos []runtime.ToolInfo
	for _, o := range old {
		infos = append(infos, o.info())
		for suffix, doc := range map[string][]byte{".input.json": o.Input, ".output.json": o.Output} {
			writeFile(t, filepath.Join(dir, "schemas", o.Name+suffix), doc)
		}
	}
	writeLock(t, dir, sorted(infos))
	prev, err := contract.ReadPrevious(filepath.Join(dir, lockfile.FileName), filepath.Join(dir, "schemas"))
	if err != nil {
		t.Fatal(err)
	}

	var nowInfos []runtime.ToolInfo
	var tools []*model.Tool
	for _, n := range now {
		nowInfos = append(nowInfos, n.info())
		tools = append(tools, &model.Tool{Name: n.Name, Version: n.Version, Effect: n.Effect,
			Pos: token.Position{Filename: "h/h.go", Line: n.Line, Column: 1}})
	}
	changes, newLock, err := contract.Compare(prev, sorted(nowInfos))
	if err != nil {
		t.Fatal(err)
	}
	errs, warnings := contract.Gate(changes, tools, lockfile.FileName)
	var b strings.Builder
	for _, list := range [][]model.Diagnostic{warnings, errs} {
		for _, d := range list {
			b.WriteString(d.Format("") + "\n")
		}
	}
	b.WriteString(contract.Diff(prev, newLock, changes))
	return b.String()
}

// writeLock commits the lock of infos in dir, as keelgen writes it.
func writeLock(t *testing.T, dir string, infos []runtime.ToolInfo) {
	t.Helper()
	lock, err := lockfile.OfInfos(infos)
	if err != nil {
		t.Fatal(err)
	}
	lockFile, err := lock.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, lockfile.FileName), lockFile)
}

func sorted(infos []runtime.ToolInfo) []runtime.ToolInfo {
	slices.SortFunc(infos, func(a, b runtime.ToolInfo) int { return strings.Compare(a.Name, b.Name) })
	return infos
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The committed schema files are read only when a locked schema changed:
// an unreadable one (here a directory named like a schema) stops a run
// that needs it, and is never touched by one that does not.
func TestSchemaFilesAreReadOnlyForAChange(t *testing.T) {
	dir := t.TempDir()
	tl := tool{Name: "t", Version: "1.0", Effect: "read", Description: "T.",
		Input:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`),
		Output: json.RawMessage(`{"type":"object"}`)}
	writeLock(t, dir, []runtime.ToolInfo{tl.info()})
	if err := os.MkdirAll(filepath.Join(dir, "schemas", "t.input.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	prev, err := contract.ReadPrevious(filepath.Join(dir, lockfile.FileName), filepath.Join(dir, "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	if changes, _, err := contract.Compare(prev, []runtime.ToolInfo{tl.info()}); err != nil || changes[0].Kind != contract.Unchanged {
		t.Fatalf("unchanged set: %v %+v", err, changes)
	}
	changed := tl
	changed.Input = json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}}}`)
	if _, _, err := contract.Compare(prev, []runtime.ToolInfo{changed.info()}); err == nil || !strings.Contains(err.Error(), "t.input.json") {
		t.Fatalf("a changed schema with an unreadable committed file: err %v, want the file named", err)
	}
}
