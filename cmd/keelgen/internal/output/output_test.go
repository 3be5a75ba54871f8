package output_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/keelgen/keel/cmd/keelgen/internal/files"
	"github.com/keelgen/keel/cmd/keelgen/internal/output"
	"github.com/keelgen/keel/internal/lockfile"
	"github.com/keelgen/keel/internal/testing/testmod"
	"github.com/keelgen/keel/runtime"
)

const header = "// " + files.Header + "\n\npackage out\n"

// lockFor is a keel.lock.json that lists tools.
func lockFor(t *testing.T, tools ...string) string {
	t.Helper()
	var infos []runtime.ToolInfo
	for _, name := range tools {
		infos = append(infos, runtime.ToolInfo{Name: name, Version: "1.0", Effect: runtime.EffectRead,
			InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	l, err := lockfile.OfInfos(infos)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// generated is what keelgen would write for tool "a".
func generated(t *testing.T) []files.File {
	return []files.File{
		{Path: files.GoFileName, Content: []byte(header + "// new\n")},
		{Path: files.LockFileName, Content: []byte(lockFor(t, "a"))},
		{Path: files.InputSchemaFile("a"), Content: []byte(`{"type":"object"}`)},
		{Path: files.OutputSchemaFile("a"), Content: []byte(`{"type":"object"}`)},
	}
}

// Orphans are only the schema files the old lock lists and Go files with
// keelgen's header; a user's file in schemas/ or a Go file of their own
// stays, untouched.
func TestOrphansAreOnlyWhatKeelgenOwns(t *testing.T) {
	dir := t.TempDir()
	testmod.Write(t, dir, map[string]string{
		files.GoFileName:            header,
		"extra_gen.go":              header,
		"helpers.go":                "package out\n",
		files.LockFileName:          lockFor(t, "a", "b"),
		files.InputSchemaFile("a"):  `{"type":"object"}`,
		files.OutputSchemaFile("a"): `{"type":"object"}`,
		files.InputSchemaFile("b"):  `{}`,
		files.OutputSchemaFile("b"): `{}`,
		"schemas/user_api.json":     `{"mine":true}`,
	})
	gen := generated(t)
	c, err := output.Compare(dir, gen)
	if err != nil {
		t.Fatal(err)
	}
	wantOrphans := []string{"extra_gen.go", files.InputSchemaFile("b"), files.OutputSchemaFile("b")}
	if !slices.Equal(c.Orphaned, wantOrphans) || len(c.Refused) != 0 {
		t.Fatalf("orphaned %v refused %v, want orphaned %v", c.Orphaned, c.Refused, wantOrphans)
	}
	if err := output.Write(dir, gen, c); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "schemas/user_api.json")) != `{"mine":true}` || read(t, filepath.Join(dir, "helpers.go")) != "package out\n" {
		t.Fatal("a user's file was changed")
	}
	for _, p := range wantOrphans {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("orphan %s not removed", p)
		}
	}
}

// A file keelgen does not own where it must write is refused, and Write
// writes nothing.
func TestFilesInTheWayAreRefused(t *testing.T) {
	cases := map[string]struct {
		tree map[string]string
		want string
	}{
		"schema file not in the lock": {map[string]string{files.InputSchemaFile("a"): `{"user":1}`},
			"schemas/a.input.json: exists with other content and no keel.lock.json lists its tool"},
		"schema file, lock lists other tools": {map[string]string{files.LockFileName: lockFor(t, "z"), files.InputSchemaFile("a"): `{"user":1}`},
			"schemas/a.input.json: exists and keel.lock.json does not list its tool"},
		"Go file without the header": {map[string]string{files.GoFileName: "package out\n// mine\n"},
			"keel_tools.go: exists without keelgen's header"},
		"a lock keelgen cannot read": {map[string]string{files.LockFileName: `{"mine":true}`},
			"keel.lock.json: is not a lock keelgen can read"},
	}
	for name, c := range cases {
		dir := t.TempDir()
		testmod.Write(t, dir, c.tree)
		gen := generated(t)
		ch, err := output.Compare(dir, gen)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Join(ch.RefusalLines(""), "\n")
		if !strings.Contains(lines, c.want) || ch.Empty() {
			t.Errorf("%s: refusals %q, want %q", name, lines, c.want)
			continue
		}
		if err := output.Write(dir, gen, ch); err == nil {
			t.Errorf("%s: Write went ahead", name)
		}
		for p, content := range c.tree {
			if read(t, filepath.Join(dir, p)) != content {
				t.Errorf("%s: %s was changed", name, p)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, files.OutputSchemaFile("a"))); !os.IsNotExist(err) && c.tree[files.OutputSchemaFile("a")] == "" {
			t.Errorf("%s: something was written", name)
		}
	}
}

// keelgen follows no symbolic link inside the output directory: a linked
// schemas/ or a linked file is refused, and nothing behind it is written or
// deleted.
func TestSymlinksAreRefused(t *testing.T) {
	for _, lock := range []bool{true, false} {
		t.Run(fmt.Sprintf("lock=%v", lock), func(t *testing.T) { symlinksAreRefused(t, lock) })
	}
}

// symlinksAreRefused is TestSymlinksAreRefused with a readable lock in the
// output directory, or none (a first run, or a lock someone deleted).
func symlinksAreRefused(t *testing.T, lock bool) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	testmod.Write(t, elsewhere, map[string]string{"a.input.json": `{"theirs":1}`, "b.input.json": `{"theirs":2}`})
	if lock {
		testmod.Write(t, dir, map[string]string{files.LockFileName: lockFor(t, "a", "b")})
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, files.SchemaDir)); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "target.go")
	testmod.Write(t, filepath.Dir(target), map[string]string{"target.go": header})
	if err := os.Symlink(target, filepath.Join(dir, files.GoFileName)); err != nil {
		t.Fatal(err)
	}
	gen := generated(t)
	ch, err := output.Compare(dir, gen)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Join(ch.RefusalLines("out"), "\n")
	for _, want := range []string{"out/schemas: is a symbolic link", "out/keel_tools.go: is a symbolic link"} {
		if !strings.Contains(lines, want) {
			t.Errorf("refusals %q lack %q", lines, want)
		}
	}
	if err := output.Write(dir, gen, ch); err == nil {
		t.Fatal("Write went ahead")
	}
	if read(t, filepath.Join(elsewhere, "a.input.json")) != `{"theirs":1}` || read(t, filepath.Join(elsewhere, "b.input.json")) != `{"theirs":2}` || read(t, target) != header {
		t.Fatal("a file behind a link was changed")
	}
	if written, _ := filepath.Glob(filepath.Join(elsewhere, "*")); len(written) != 2 {
		t.Fatalf("files were written behind the link: %v", written)
	}
}

// A deleted lock leaves its schema files without an owner; where they hold
// exactly what keelgen writes there is nothing in the way, and the run
// writes the lock again.
func TestDeletedLockIsWrittenAgain(t *testing.T) {
	dir := t.TempDir()
	gen := generated(t)
	testmod.Write(t, dir, map[string]string{
		files.GoFileName:            string(gen[0].Content),
		files.InputSchemaFile("a"):  string(gen[2].Content),
		files.OutputSchemaFile("a"): string(gen[3].Content),
	})
	ch, err := output.Compare(dir, gen)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Refused) != 0 || strings.Join(ch.Lines(""), "\n") != "missing: "+files.LockFileName {
		t.Fatalf("after deleting the lock: refused %v, changes %v", ch.Refused, ch.Lines(""))
	}
	if err := output.Write(dir, gen, ch); err != nil {
		t.Fatal(err)
	}
}

// A lock that names a path instead of a tool (../../victim) owns nothing:
// keelgen refuses to write, and deletes nothing outside the directory or in
// it.
func TestCraftedLockDeletesNothing(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "out")
	crafted := strings.Replace(lockFor(t, "victim"), `"name": "victim"`, `"name": "../../../victim"`, 1)
	if crafted == lockFor(t, "victim") {
		t.Fatal("no name to replace in the lock")
	}
	testmod.Write(t, root, map[string]string{
		"victim.input.json":                       "keep",
		"victim.output.json":                      "keep",
		"a/out/" + files.LockFileName:             crafted,
		"a/out/" + files.InputSchemaFile("other"): "{}",
	})
	ch, err := output.Compare(dir, generated(t))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Join(ch.RefusalLines(""), "\n"); !strings.Contains(lines, "keel.lock.json: is not a lock keelgen can read (tampered") || len(ch.Orphaned) != 0 {
		t.Fatalf("a crafted lock: refusals %q, orphans %v", lines, ch.Orphaned)
	}
	if err := output.Write(dir, generated(t), ch); err == nil {
		t.Fatal("Write went ahead past a crafted lock")
	}
	for _, f := range []string{"victim.input.json", "victim.output.json", "a/out/" + files.InputSchemaFile("other")} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
