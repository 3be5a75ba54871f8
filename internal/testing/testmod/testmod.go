// Package testmod makes throwaway Go modules for keel's end-to-end tests:
// a module "written by someone else" that requires keel through a replace
// directive pointing at this checkout, and pins keelgen with a tool line,
// exactly as the README tells a user to.
package testmod

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// Path is the module path of every test module.
const Path = "example.com/user"

// Root returns the directory of keel's own module.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := RootDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// RootDir is Root outside a test: the nearest directory above the working
// directory that holds keel's go.mod.
func RootDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modfile.ModulePath(data) == "github.com/keelgen/keel" {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("keel's go.mod not found above the working directory")
		}
		dir = parent
	}
}

// New writes files (slash paths → content) into a new module and returns its
// directory. The module requires what keel requires, at keel's versions, and
// reuses keel's go.sum, so it builds from the module cache.
func New(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := Make(Root(t), dir, Path, files); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Make writes a module named path into dir, as New does, for keel at root;
// for commands that are not tests (the scale measurement).
func Make(root, dir, path string, files map[string]string) error {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return err
	}
	keel, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return err
	}
	var mod bytes.Buffer
	fmt.Fprintf(&mod, "module %s\n\ngo %s\n\nrequire github.com/keelgen/keel v0.0.0\n\nrequire (\n", path, keel.Go.Version)
	for _, r := range keel.Require {
		fmt.Fprintf(&mod, "\t%s %s\n", r.Mod.Path, r.Mod.Version)
	}
	fmt.Fprintf(&mod, ")\n\nreplace github.com/keelgen/keel => %s\n\ntool github.com/keelgen/keel/cmd/keelgen\n", root)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return err
	}
	all := map[string]string{"go.mod": mod.String(), "go.sum": string(sum)}
	for k, v := range files {
		all[k] = v
	}
	for name, content := range all {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// EndToEndVar names the environment variable that runs the end-to-end
// tests: those that run keelgen several times over a module (generate,
// edit, generate again), or run other go commands in it (go vet, go mod,
// go build, the built programs, git), as a user does. They cost most of
// the suite's time, so a plain go test ./... leaves them out; .ci/run
// sets it. A test that calls gen.Generate in process is not one of them.
const EndToEndVar = "KEEL_E2E"

// EndToEnd skips t unless KEEL_E2E is true (1, true), and under -short. A
// value that is not a boolean fails the test rather than being read as no.
func EndToEnd(t testing.TB) {
	t.Helper()
	v := os.Getenv(EndToEndVar)
	if v == "" {
		t.Skip("an end-to-end test: KEEL_E2E=1 go test ./... runs it (CI does)")
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		t.Fatalf("%s=%q: want 1 or 0", EndToEndVar, v)
	}
	if !on || testing.Short() {
		t.Skip("an end-to-end test: runs with KEEL_E2E=1, without -short")
	}
}

// Write writes files below dir.
func Write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Go runs the go command in dir and returns its combined output and error.
// -mod=mod lets it add go.sum lines for the module's own needs from the cache.
func Go(dir string, args ...string) (string, error) {
	out, err := command(dir, args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// GoEnv is Go with extra environment variables.
func GoEnv(dir string, env []string, args ...string) (string, error) {
	cmd := command(dir, args...)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// MustGo runs the go command in dir, fails the test on error, and returns
// standard output only (a program's log goes to standard error).
func MustGo(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := command(dir, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

func command(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	// -trimpath keeps the throwaway directory out of every build: the same
	// sources in another test's module hit the build and run caches.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -trimpath -ldflags=-w", "GOWORK=off")
	return cmd
}

// Setup sets the environment of the go commands a test process starts,
// keelgen's own among them (go list, the schema program); a test's TestMain
// calls it. -trimpath in GOFLAGS makes a schema program made for one
// throwaway module the cached executable in the next run's, whose
// directory differs. GOGC=off, bounded by GOMEMLIMIT, spares the go
// commands the collections that were a sixth of their CPU time in
// cmd/keelgen/internal/gen's tests. The README walkthrough types its commands as a user
// does, without any of it (UserEnv).
func Setup() {
	for k, v := range harnessEnv {
		if k == "GOFLAGS" {
			v = strings.TrimSpace(os.Getenv("GOFLAGS") + " " + v)
		}
		os.Setenv(k, v)
	}
}

// harnessEnv is what Setup adds to the environment.
var harnessEnv = map[string]string{"GOFLAGS": "-trimpath", "GOGC": "off", "GOMEMLIMIT": "1GiB"}

// UserEnv is the environment a user types commands in: the process's own,
// less GOFLAGS (keel's tests set -mod=mod and -trimpath for their modules; a
// user has nothing of the kind) and what else Setup set.
func UserEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, set := harnessEnv[k]; !set {
			env = append(env, kv)
		}
	}
	return env
}

// Git runs git in dir with a fixed identity and returns its trimmed
// combined output.
func Git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "user.name=keel test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
