package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/keelgen/keel/internal/testing/modproxy"
	"github.com/keelgen/keel/internal/testing/testmod"
	"github.com/keelgen/keel/runtime"
)

// The release rehearsal: keel and every other module of the repository, at
// the version the others require of keel, go into a module proxy on disk,
// and a new user installs them from it as from the module proxy: the
// README's first install line (go get -tool ...@latest) and the whole
// walkthrough; then, each in a fresh module with no replace line for keel,
// go get of each adapter at that version and a program that uses it, built
// and run. Each other module is also tidy against the proxy, but for keel's
// own checksums, which a release adds (docs/release.md).
func TestReleaseRehearsal(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	root := testmod.Root(t)
	proxy := t.TempDir()
	mods, files, err := modproxy.Modules(root)
	if err != nil {
		t.Fatal(err)
	}
	version := releaseVersion(t, mods[1:])
	if err := modproxy.Build(root, proxy, version, mods, files); err != nil {
		t.Fatal(err)
	}
	env := proxyEnv(t, proxy)

	dir := t.TempDir()
	walkthrough(t, dir, root, "proxy", env)
	if out, err := goAs(dir, env, "list", "-m", "github.com/keelgen/keel"); err != nil || strings.TrimSpace(out) != "github.com/keelgen/keel "+version {
		t.Fatalf("the walkthrough's module has %q (%v), not keel %s from the proxy", out, err, version)
	}

	adapters := 0
	for _, m := range mods {
		if !strings.HasPrefix(m.Dir, "adapters/") {
			continue
		}
		adapters++
		t.Run(filepath.Base(m.Dir), func(t *testing.T) {
			use, ok := adapterPrograms[filepath.Base(m.Dir)]
			if !ok {
				t.Fatalf("%s: no program in adapterPrograms uses it", m.Path)
			}
			dir := t.TempDir()
			typeIn(t, dir, root, "go mod init", "go mod init example.com/you\n"+use.setup, env)
			if out, err := goAs(dir, env, "get", "github.com/keelgen/keel@"+version, m.Path+"@"+version); err != nil {
				t.Fatalf("go get %s@%s: %v\n%s", m.Path, version, err, out)
			}
			testmod.Write(t, dir, map[string]string{"main.go": use.main})
			for _, args := range [][]string{{"mod", "tidy"}, {"vet", "."}, {"run", "."}} {
				out, err := goAs(dir, env, args...)
				if err != nil {
					t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				if args[0] == "run" && !strings.Contains(out, use.prints) {
					t.Fatalf("the program printed %q, not %q", out, use.prints)
				}
			}
		})
	}
	if adapters < 5 {
		t.Fatalf("the proxy holds %d adapters", adapters)
	}

	// Each other module's go.mod and go.sum as tidy against the proxy,
	// without its go.work: the lines a tidy would change, keel's aside.
	for _, m := range mods[1:] {
		out, err := goAs(filepath.Join(root, m.Dir), append(env, "GOWORK=off"), "mod", "tidy", "-diff")
		var changed []string
		for line := range strings.SplitSeq(out, "\n") {
			if (strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-")) && !strings.HasPrefix(line, "+++") && !strings.HasPrefix(line, "---") &&
				!strings.HasPrefix(line[1:], "github.com/keelgen/keel ") {
				changed = append(changed, line)
			}
		}
		switch {
		case len(changed) > 0:
			t.Errorf("%s: go mod tidy against the proxy would change:\n%s", m.Dir, strings.Join(changed, "\n"))
		case err != nil && !strings.Contains(out, "\n+++ "): // failed, not a diff
			t.Errorf("%s: go mod tidy -diff against the proxy: %v\n%s", m.Dir, err, out)
		}
	}
}

// releaseVersion is the version of keel every other module requires: the
// one they are released with.
func releaseVersion(t *testing.T, others []modproxy.Module) string {
	t.Helper()
	versions := map[string][]string{}
	for _, m := range others {
		f, err := modfile.Parse(m.Dir+"/go.mod", m.GoMod, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range f.Require {
			if r.Mod.Path == "github.com/keelgen/keel" {
				versions[r.Mod.Version] = append(versions[r.Mod.Version], m.Dir)
			}
		}
		for _, r := range f.Replace {
			if strings.HasPrefix(r.Old.Path, "github.com/keelgen/keel") {
				t.Errorf("%s/go.mod replaces %s: a published module's replace lines are not seen by its users (use .ci/workspaces)", m.Dir, r.Old.Path)
			}
		}
	}
	if len(versions) != 1 {
		t.Fatalf("the other modules require keel at %d versions, not one: %v", len(versions), versions)
	}
	for v, dirs := range versions {
		if len(dirs) < 7 {
			t.Fatalf("only %d modules require keel: %v", len(dirs), dirs)
		}
		if v != "v"+runtime.Version {
			t.Fatalf("the other modules require keel %s, but its runtime.Version is %s: a release is both (docs/release.md)", v, runtime.Version)
		}
		return v
	}
	panic("unreachable")
}

// proxyEnv is a user's environment with the proxy at dir first: keel's
// modules come from it, every other module from the module cache or the
// module proxy, into a module cache of the test's own (a version of keel's
// cached there must not meet another with the same version later).
func proxyEnv(t *testing.T, dir string) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache, upstream, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	modcache := t.TempDir()
	t.Cleanup(func() { // the module cache is read-only; go clean empties it
		cmd := exec.Command("go", "clean", "-modcache")
		cmd.Env = append(os.Environ(), "GOMODCACHE="+modcache)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go clean -modcache: %v\n%s", err, out)
		}
	})
	return append(testmod.UserEnv(),
		"GOPROXY="+fmt.Sprintf("file://%s,file://%s,%s", dir, filepath.Join(cache, "cache", "download"), upstream),
		"GOMODCACHE="+modcache,
		"GONOSUMDB=github.com/keelgen/keel", // not in the checksum database until it is published
		"GOFLAGS=",
	)
}

// A program per adapter, in a module of its own: what it needs before go
// get, its main.go (keel's example tools through the adapter; the code
// given ends with what to print in summary), and what it prints.
var adapterPrograms = map[string]struct{ setup, main, prints string }{
	"anthropicrunner": {main: adapterMain(`"github.com/keelgen/keel/adapters/anthropicrunner"`, `
	tools, err := anthropicrunner.Tools(ctx, exec, anthropicrunner.Options{Context: caller})
	summary := fmt.Sprint(len(tools), " tools")`), prints: "2 tools"},
	"eino": {main: adapterMain(`"github.com/keelgen/keel/adapters/eino"`, `
	tools, err := eino.Tools(ctx, exec, eino.Options{Context: caller})
	summary := fmt.Sprint(len(tools), " tools")`), prints: "2 tools"},
	"langchaingo": {main: adapterMain(`"github.com/keelgen/keel/adapters/langchaingo"`, `
	tools, err := langchaingo.Tools(ctx, exec, langchaingo.Options{Context: caller})
	summary := fmt.Sprint(len(tools), " tools")`), prints: "2 tools"},
	// docs/frameworks.md: a module that builds Genkit needs this line.
	"genkit": {setup: "go mod edit -replace=github.com/invopop/jsonschema=github.com/invopop/jsonschema@v0.13.0\n",
		main: adapterMain(`keelgenkit "github.com/keelgen/keel/adapters/genkit"`, `
	tools, err := keelgenkit.Tools(ctx, exec, keelgenkit.Options{Context: caller})
	summary := fmt.Sprint(len(tools), " tools")`), prints: "2 tools"},
	"temporal": {main: adapterMain(`"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	keeltemporal "github.com/keelgen/keel/adapters/temporal"`, `
	c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"}) // connects when the worker starts
	if err != nil {
		log.Fatal(err)
	}
	_ = ctx
	err = keeltemporal.Register(worker.New(c, "keel", worker.Options{}), exec, keeltemporal.Options{})
	summary := "the executor's activity registered"`), prints: "the executor's activity registered"},
}

func adapterMain(imports, use string) string {
	return `package main

import (
	"context"
	"fmt"
	"log"

	` + imports + `
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

func main() {
	ctx := context.Background()
	exec, err := generated.NewExecutor()
	if err != nil {
		log.Fatal(err)
	}
	caller := func(context.Context) runtime.ExecutionContext { return runtime.ExecutionContext{Principal: "you"} }
	_ = caller` + use + `
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(summary)
}
`
}
