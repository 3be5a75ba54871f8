// Command scale measures keel on synthetic tool modules of N tools:
//
//	go run ./internal/testing/synth/scale -n 10,100,1000,2000
//
// For each N it writes a module (internal/testing/synth), warms the build cache,
// then, -runs times, changes the handler package (a new constant, so every
// dependent package recompiles) and times go build of the handlers, go
// generate (keelgen) and go build of the generated package, and starts a
// fresh process that times one cold NewExecutor. It also checks that the
// generated Lookup finds every tool by its exact name only, and that each
// regeneration writes the same bytes. It prints the medians,
// the ratios the scale issue sets bounds on, and the peak memory of
// go generate. With -bench it also runs the executor benchmarks of the
// module (dispatch of a valid call and of an unknown name shaped like a
// real one) at each N.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/keelgen/keel/internal/testing/synth"
	"github.com/keelgen/keel/internal/testing/testmod"
)

func main() {
	sizes := flag.String("n", "10,100,1000", "comma-separated numbers of tools")
	runs := flag.Int("runs", 3, "measured runs per size (medians are printed)")
	packages := flag.Int("packages", 1, "spread the tools over this many handler packages, generated as one set")
	exports := flag.Int("exports", 0, "also declare this many exported constants in the (first) handler package, as a real package exports many names the lint checks descriptions against")
	bench := flag.Bool("bench", false, "also run the executor benchmarks of each module (-count 6)")
	keep := flag.Bool("keep", false, "keep the synthetic modules (their directories are printed)")
	guard := flag.Bool("guard", false, "exit 1 when go generate grows faster than the tools (the largest N over the smallest) "+
		"or costs more than a bound times go build of the handlers: CI's regression guard")
	flag.Parse()
	root, err := keelRoot()
	if err != nil {
		fail(err)
	}
	fmt.Println("| N | go generate, code edit | go generate, schema edit | go build handlers | ratios | go build generated | ratio | cold NewExecutor | peak RSS of go generate |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	var benchOut []string
	var measured []sized
	for _, field := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 {
			fail(fmt.Errorf("-n: %q is not a number of tools", field))
		}
		dir, err := os.MkdirTemp("", fmt.Sprintf("keel-synth-%d-", n))
		if err != nil {
			fail(err)
		}
		m, err := measure(root, dir, n, *packages, *exports, *runs)
		if err != nil {
			fail(fmt.Errorf("N=%d: %w", n, err))
		}
		fmt.Printf("| %d | %s | %s | %s | %.1f×, %.1f× | %s | %.1f× | %s | %d MiB |\n", n, sec(m.gen), sec(m.genSchema), sec(m.handlers),
			ratio(m.gen, m.handlers), ratio(m.genSchema, m.handlers),
			sec(m.tools), ratio(m.tools, m.handlers), m.start.Round(time.Millisecond/10), m.maxRSS>>20)
		measured = append(measured, sized{n, m})
		if *bench {
			out, err := goCmd(dir, "test", "-run", "^$", "-bench", ".", "-count", "6", "./"+synth.Bench)
			if err != nil {
				fail(fmt.Errorf("N=%d benchmarks: %w\n%s", n, err, out))
			}
			benchOut = append(benchOut, fmt.Sprintf("N=%d\n%s", n, out))
		}
		if *keep {
			fmt.Fprintln(os.Stderr, "kept", dir)
		} else {
			os.RemoveAll(dir)
		}
	}
	for _, b := range benchOut {
		fmt.Println()
		fmt.Print(b)
	}
	if *guard && !guarded(measured) {
		os.Exit(1)
	}
}

type sized struct {
	n int
	m measurement
}

// The guard's bounds, well above today's figures on a shared 2-core
// machine, so noise does not trip them, and a pass that grows with tools ×
// tools (it made 1,000 tools cost 15× a build) does. N=100 to 1,000: after
// a code edit, go generate grew 1.4× to 1.6× and cost 0.9× to 1.8× go
// build of the handlers; after a schema edit, which writes every changed
// schema and explains each change, it grew 1.8× to 4.0× (the higher while
// other builds shared the machine) and cost 2.4× to 3.3×.
const (
	maxGrowthPerTool       = 0.5 // go generate's growth over the tools' growth, after a code edit
	maxGrowthPerToolSchema = 0.8 // the same after an edit that changes schemas
	maxOverBuild           = 3.0 // go generate over go build of the handlers at the largest N, after a code edit
	maxOverBuildSchema     = 5.0 // the same after an edit that changes schemas
)

// guarded checks the bounds on the smallest and the largest N measured,
// ratios of the same run only.
func guarded(measured []sized) bool {
	if len(measured) < 2 {
		fmt.Fprintln(os.Stderr, "scale: -guard needs two sizes")
		return false
	}
	small, large := measured[0], measured[len(measured)-1]
	tools := float64(large.n) / float64(small.n)
	ok := true
	for _, edit := range []struct {
		name                    string
		small, large            time.Duration
		maxGrowth, maxOverBuild float64
	}{
		{"a code edit", small.m.gen, large.m.gen, maxGrowthPerTool * tools, maxOverBuild},
		{"a schema edit", small.m.genSchema, large.m.genSchema, maxGrowthPerToolSchema * tools, maxOverBuildSchema},
	} {
		growth, over := ratio(edit.large, edit.small), ratio(edit.large, large.m.handlers)
		passed := growth <= edit.maxGrowth && over <= edit.maxOverBuild
		verdict := "ok"
		if !passed {
			verdict, ok = "FAILED", false
		}
		fmt.Printf("\nguard %s: after %s, go generate grew %.1f× for %.0f× the tools (bound %.1f×); at N=%d it costs %.1f× go build of the handlers (bound %.1f×)\n",
			verdict, edit.name, growth, tools, edit.maxGrowth, large.n, over, edit.maxOverBuild)
	}
	return ok
}

type measurement struct {
	gen, genSchema, handlers, tools, start time.Duration
	maxRSS                                 int64
}

// measure writes the module, warms the caches, and returns the medians of
// runs measured edits.
func measure(root, dir string, n, packages, exports, runs int) (measurement, error) {
	files := synth.FilesIn(n, 0, packages)
	if exports > 0 {
		path := filepath.ToSlash(filepath.Join(filepath.Dir(synth.HandlersFile(packages)), "exports.go"))
		var b strings.Builder
		b.WriteString("package " + filepath.Base(filepath.Dir(path)) + "\n\n// Exported names a real handler package would have.\nconst (\n")
		for i := range exports {
			fmt.Fprintf(&b, "\tExportedName%d = %d\n", i, i)
		}
		b.WriteString(")\n")
		files[path] = b.String()
	}
	if err := testmod.Make(root, dir, "example.com/synth", files); err != nil {
		return measurement{}, err
	}
	for _, args := range [][]string{{"generate", "./" + synth.Handlers}, {"build", "./..."}} {
		if out, err := goCmd(dir, args...); err != nil {
			return measurement{}, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	// The generated Lookup finds every tool by its exact name only.
	if out, err := goCmd(dir, "run", "./cmd/lookup"); err != nil || strings.TrimSpace(out) != fmt.Sprintf("ok %d", n) {
		return measurement{}, fmt.Errorf("lookup check: %v\n%s", err, out)
	}
	first, err := snapshot(filepath.Join(dir, synth.Tools))
	if err != nil {
		return measurement{}, err
	}
	var gen, genSchema, handlers, tools, start []time.Duration
	var maxRSS int64
	// Each run is two edits: one of code only (Rev), whose schemas stay as
	// they were, and one of the tools (a parameter's description, and the
	// version bump it needs), whose schemas change.
	generate := func(rev, schemaRev int) (time.Duration, error) {
		if err := os.WriteFile(filepath.Join(dir, synth.HandlersFile(packages)), []byte(synth.HandlersSource(n, rev, schemaRev, packages)), 0o644); err != nil {
			return 0, err
		}
		// The handlers first: go generate's own go list would compile them.
		d, _, err := timed(dir, "build", "./"+synth.Handlers+"/...")
		if err != nil {
			return 0, err
		}
		handlers = append(handlers, d)
		d, rss, err := timed(dir, "generate", "./"+synth.Handlers)
		maxRSS = max(maxRSS, rss)
		return d, err
	}
	for run := 1; run <= runs; run++ {
		d, err := generate(2*run-1, run-1)
		if err != nil {
			return measurement{}, err
		}
		gen = append(gen, d)
		// Deterministic: the schemas did not change, so neither do the files.
		if again, err := snapshot(filepath.Join(dir, synth.Tools)); err != nil || again != first {
			return measurement{}, fmt.Errorf("go generate wrote other bytes for the same tools (%v)", err)
		}
		if d, _, err = timed(dir, "build", "./"+synth.Tools); err != nil {
			return measurement{}, err
		}
		tools = append(tools, d)
		if d, err = coldStart(dir); err != nil {
			return measurement{}, err
		}
		start = append(start, d)

		if d, err = generate(2*run, run); err != nil {
			return measurement{}, err
		}
		genSchema = append(genSchema, d)
		again, err := snapshot(filepath.Join(dir, synth.Tools))
		if err != nil || again == first {
			return measurement{}, fmt.Errorf("a schema edit left the generated files as they were (%v)", err)
		}
		first = again
	}
	return measurement{median(gen), median(genSchema), median(handlers), median(tools), median(start), maxRSS}, nil
}

// snapshot is every file below dir, path and content, as one string.
func snapshot(dir string) (string, error) {
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		fmt.Fprintf(&b, "%s\n%s\n", p, data)
		return err
	})
	return b.String(), err
}

// coldStart builds the start program and runs it in a fresh process.
func coldStart(dir string) (time.Duration, error) {
	bin := filepath.Join(dir, "start.bin")
	if out, err := goCmd(dir, "build", "-o", bin, "./cmd/start"); err != nil {
		return 0, fmt.Errorf("build start: %w\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("start: %w\n%s", err, out)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	return time.Duration(ns), err
}

// timed runs the go command and returns its wall time and the peak RSS of
// it and its waited-for children.
func timed(dir string, args ...string) (time.Duration, int64, error) {
	cmd := goCommand(dir, args...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss << 10 // KiB on Linux
	}
	return d, rss, nil
}

func goCmd(dir string, args ...string) (string, error) {
	out, err := goCommand(dir, args...).CombinedOutput()
	return string(out), err
}

func goCommand(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	return cmd
}

func keelRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/keelgen/keel").Output()
	if err != nil {
		return "", fmt.Errorf("run this command inside keel's module: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func sec(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scale:", err)
	os.Exit(1)
}
