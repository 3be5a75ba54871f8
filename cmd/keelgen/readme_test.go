package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/testing/testmod"
)

// block is one fenced block of a Markdown file and the marker comment on the
// line before its fence.
type block struct {
	file, marker, lang, text string
	line                     int
}

var markerLine = regexp.MustCompile(`^<!-- (walkthrough|snippet)(?:: (.*?))? -->$`)

// blocks reads the fenced blocks of a Markdown file.
func blocks(t *testing.T, path string) []block {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []block
	for i := 0; i < len(lines); i++ {
		fence, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		b := block{file: filepath.Base(path), lang: fence, line: i + 1}
		if i > 0 {
			if m := markerLine.FindStringSubmatch(lines[i-1]); m != nil {
				b.marker = strings.TrimSpace(m[1] + " " + m[2])
			}
		}
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		b.text = strings.Join(body, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

// TestREADMEWalkthrough types the README's walkthrough as a new user would:
// in an empty directory outside keel's tree, with an empty go.sum and no
// GOFLAGS, each shell block run as written (the checkout's path put in for
// /path/to/keel), each file block written, each output block compared with
// what the block before it printed. Then every Go snippet of the docs is
// compiled in that module, and every excerpt is found in the file it quotes.
// The install from a checkout runs here; the one from the module proxy runs
// in TestReleaseRehearsal.
func TestREADMEWalkthrough(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	root := testmod.Root(t)
	dir := t.TempDir()
	walkthrough(t, dir, root, "checkout", testmod.UserEnv())
	snippets(t, root, dir, testmod.UserEnv())
}

// walkthrough types the README's walkthrough in dir with env: the install
// block marked install ("checkout" or "proxy"), then every other block.
func walkthrough(t *testing.T, dir, root, install string, env []string) {
	t.Helper()
	var last string
	ran, installed := 0, 0
	for _, b := range blocks(t, filepath.Join(root, "README.md")) {
		at := fmt.Sprintf("README.md:%d", b.line)
		switch kind, arg, _ := strings.Cut(b.marker, " "); {
		case b.marker == "walkthrough sh" || b.marker == "walkthrough sh "+install:
			last = typeIn(t, dir, root, at, b.text, env)
			ran++
			if b.marker != "walkthrough sh" {
				installed++
			}
		case strings.HasPrefix(b.marker, "walkthrough sh "): // the other install
		case b.marker == "walkthrough output":
			if last != b.text {
				t.Fatalf("%s: the walkthrough printed\n%s\nthe README shows\n%s", at, last, b.text)
			}
		case kind == "walkthrough" && strings.HasPrefix(arg, "file "):
			testmod.Write(t, dir, map[string]string{strings.TrimPrefix(arg, "file "): b.text})
		case b.lang == "go":
			t.Errorf("%s: a Go block without a walkthrough marker", at)
		}
	}
	if ran < 5 || installed != 1 {
		t.Fatalf("the README's walkthrough ran %d shell blocks, %d of them its install from the %s", ran, installed, install)
	}

	// Tidy and generate again, in both orders: nothing changes (the
	// walkthrough has built and run what it wrote).
	before := snapshot(t, dir)
	for _, args := range [][]string{{"mod", "tidy"}, {"generate", "./..."}, {"mod", "tidy"}} {
		if out, err := goAs(dir, env, args...); err != nil {
			t.Fatalf("go %s after the walkthrough: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if snapshot(t, dir) != before {
		t.Fatal("go mod tidy and go generate after the walkthrough changed the module")
	}
}

// snippets compiles every Go block of docs/*.md in the walkthrough's module:
// "snippet" blocks are whole files, each its own package; "snippet excerpt
// PATH" blocks must stand verbatim in keel's PATH.
func snippets(t *testing.T, root, dir string, env []string) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	n := 0
	for _, doc := range docs {
		for _, b := range blocks(t, doc) {
			at := fmt.Sprintf("docs/%s:%d", b.file, b.line)
			switch {
			case b.marker == "snippet":
				n++
				name := fmt.Sprintf("snippets/%s%d/main.go", strings.TrimSuffix(b.file, ".md"), b.line)
				testmod.Write(t, dir, map[string]string{name: b.text})
			case strings.HasPrefix(b.marker, "snippet excerpt "): // <!-- snippet: excerpt PATH -->
				quoted, err := os.ReadFile(filepath.Join(root, strings.TrimPrefix(b.marker, "snippet excerpt ")))
				if err != nil || !bytes.Contains(quoted, []byte(b.text)) {
					t.Errorf("%s: the excerpt is not in %s (%v):\n%s", at, strings.TrimPrefix(b.marker, "snippet excerpt "), err, b.text)
				}
			case b.lang == "go":
				t.Errorf("%s: a Go block without a snippet marker", at)
			}
		}
	}
	if n < 5 {
		t.Fatalf("the docs have %d Go snippets; expected every page's examples", n)
	}
	for _, args := range [][]string{{"mod", "tidy"}, {"vet", "./snippets/..."}} {
		if out, err := goAs(dir, env, args...); err != nil {
			t.Fatalf("go %s over %d doc snippets: %v\n%s", strings.Join(args, " "), n, err, out)
		}
	}
}

// typeIn runs a shell block of the README in dir as a user types it, with
// keel's checkout at root for /path/to/keel, and returns what it printed.
func typeIn(t *testing.T, dir, root, at, script string, env []string) string {
	t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.ReplaceAll(script, "/path/to/keel", root))
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %s\n%v\n%s%s", at, script, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// goAs runs the go command in dir with env.
func goAs(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The other order: the README's setup, its handler package, and go mod tidy
// before the first go generate; then generate, tidy again, build.
func TestTidyBeforeGenerate(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	root := testmod.Root(t)
	dir := t.TempDir()
	var setup, handlers *block
	for _, b := range blocks(t, filepath.Join(root, "README.md")) {
		switch {
		case b.marker == "walkthrough sh checkout":
			setup = &b
		case b.marker == "walkthrough file notes/notes.go":
			handlers = &b
		}
	}
	if setup == nil || handlers == nil {
		t.Fatal("the README has no setup block or no notes/notes.go")
	}
	typeIn(t, dir, root, fmt.Sprintf("README.md:%d", setup.line), setup.text, testmod.UserEnv())
	testmod.Write(t, dir, map[string]string{"notes/notes.go": handlers.text})
	for _, args := range [][]string{{"mod", "tidy"}, {"generate", "./..."}, {"mod", "tidy"}, {"generate", "./..."}, {"build", "./..."}} {
		if out, err := goAs(dir, testmod.UserEnv(), args...); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// docs/frameworks.md's lines for an adapter from a local checkout, typed in
// a fresh module as a user would, give a module that builds a program
// using the adapter.
func TestAdapterFromALocalCheckout(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	root := testmod.Root(t)
	dir := t.TempDir()
	var setup *block
	for _, b := range blocks(t, filepath.Join(root, "docs", "frameworks.md")) {
		if b.marker == "walkthrough sh" {
			setup = &b
			break
		}
	}
	if setup == nil {
		t.Fatal("docs/frameworks.md has no walkthrough block")
	}
	typeIn(t, dir, root, "go mod init", "go mod init example.com/you\n", testmod.UserEnv())
	typeIn(t, dir, root, fmt.Sprintf("docs/frameworks.md:%d", setup.line), setup.text, testmod.UserEnv())
	testmod.Write(t, dir, map[string]string{"main.go": `package main

import (
	"context"
	"fmt"
	"log"

	"github.com/keelgen/keel/adapters/anthropicrunner"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

func main() {
	exec, err := generated.NewExecutor()
	if err != nil {
		log.Fatal(err)
	}
	tools, err := anthropicrunner.Tools(context.Background(), exec, anthropicrunner.Options{
		Context: func(context.Context) runtime.ExecutionContext { return runtime.ExecutionContext{Principal: "you"} },
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(tools), "tools")
}
`})
	for _, args := range [][]string{{"mod", "tidy"}, {"run", "."}} {
		out, err := goAs(dir, testmod.UserEnv(), args...)
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if args[0] == "run" && !strings.Contains(out, "2 tools") {
			t.Fatalf("the program printed %q", out)
		}
	}
}
