package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// setLine is the go:generate line of the set a run writes, found among the
// .go files of the directory keelgen runs in, as go generate runs it there.
type setLine struct {
	at   string   // file:line
	args []string // keelgen's arguments on it
}

// findSetLines returns the keelgen go:generate lines of dir's Go files.
func findSetLines(dir string) []setLine {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var out []setLine
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			rest, ok := strings.CutPrefix(sc.Text(), "//go:generate ")
			if !ok {
				continue
			}
			words := strings.Fields(rest)
			i := slices.IndexFunc(words, func(w string) bool {
				name, _, _ := strings.Cut(w, "@")
				return name == "keelgen" || strings.HasSuffix(name, "/keelgen")
			})
			if i >= 0 {
				args := make([]string, 0, len(words)-i-1)
				for _, w := range words[i+1:] {
					args = append(args, strings.Trim(w, `"`))
				}
				out = append(out, setLine{at: fmt.Sprintf("%s:%d", filepath.Base(file), n), args: args})
			}
		}
		f.Close()
	}
	return out
}

// shape is what of a run's flags shapes the set it writes (not how it is
// checked, compared, linted or signed).
func shape(wd string, o options) string {
	patterns := slices.Clone(o.patterns)
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	for i, p := range patterns {
		patterns[i] = filepath.ToSlash(inDir(wd, p))
	}
	return fmt.Sprintf("-out %s -pkg %q -tools %q -defer %q -upfront %q %s",
		filepath.ToSlash(inDir(wd, o.out)), o.pkg, o.tools, o.deferred, o.upfront, strings.Join(patterns, " "))
}

// checkSetLine refuses a run by hand (not under go generate) that would
// write, with other flags, the set a go:generate line of wd writes: it
// would change the set silently (a -defer left out rewrites the lock with
// no deferred tool).
func checkSetLine(wd string, o options, stderr io.Writer) bool {
	if os.Getenv("GOFILE") != "" { // go generate runs the line itself
		return true
	}
	for _, line := range findSetLines(wd) {
		set, ok := parseFlags(line.args, io.Discard)
		if !ok || filepath.Clean(inDir(wd, set.out)) != filepath.Clean(inDir(wd, o.out)) {
			continue
		}
		if shape(wd, set) != shape(wd, o) {
			fmt.Fprintf(stderr, "keelgen: %s writes this set with: keelgen %s\n"+
				"keelgen: this run's flags would change it (%s); run go generate, or change that line\n",
				line.at, strings.Join(line.args, " "), describeShape(wd, set, o))
			return false
		}
	}
	return true
}

// describeShape names the set-shaping flags that differ.
func describeShape(wd string, set, run options) string {
	var diffs []string
	for _, f := range []struct{ name, set, run string }{
		{"-pkg", set.pkg, run.pkg}, {"-tools", set.tools, run.tools}, {"-defer", set.deferred, run.deferred}, {"-upfront", set.upfront, run.upfront},
	} {
		if f.set != f.run {
			diffs = append(diffs, fmt.Sprintf("%s %q, not %q", f.name, f.run, f.set))
		}
	}
	if len(diffs) == 0 {
		diffs = append(diffs, "other packages")
	}
	return strings.Join(diffs, "; ")
}
