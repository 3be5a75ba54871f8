// Command testsummary reads go test -json on standard input and writes what
// a plain go test would have said of it (each package's ok or FAIL line,
// and the output of every failed test), then the slowest packages by wall
// time; it exits 1 when a package failed or did not build.
//
//	go test -json ./... | go run ./internal/testing/testsummary -top 10
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type pkgTime struct {
	name    string
	elapsed float64
}

func main() {
	top := flag.Int("top", 10, "how many of the slowest packages to name")
	flag.Parse()
	failed, err := summarize(os.Stdin, os.Stdout, *top)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// summarize writes the plain report of in to out and reports whether a
// package failed.
func summarize(in io.Reader, out io.Writer, top int) (failed bool, err error) {
	held := map[string][]string{} // a running test's output, by package and test
	var times []pkgTime
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(out, "%s\n", line) // the go command's own words: a build failure
			failed = failed || strings.HasPrefix(string(line), "FAIL")
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch {
		case e.Action == "build-output": // a package that does not build, in the compiler's words
			fmt.Fprint(out, e.Output)
		case e.Action == "build-fail":
			failed = true
		case e.Action == "output" && e.Test != "":
			held[key] = append(held[key], e.Output)
		case e.Action == "output":
			if !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "PASS\n") {
				fmt.Fprint(out, e.Output)
			}
		case e.Test != "" && (e.Action == "pass" || e.Action == "skip"):
			delete(held, key)
		case e.Test != "" && e.Action == "fail":
			fmt.Fprint(out, strings.Join(held[key], ""))
			delete(held, key)
		case e.Action == "fail":
			failed = true
			fallthrough
		case e.Action == "pass":
			times = append(times, pkgTime{e.Package, e.Elapsed})
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	slices.SortFunc(times, func(a, b pkgTime) int {
		if a.elapsed != b.elapsed {
			if a.elapsed > b.elapsed {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	fmt.Fprintf(out, "\nthe %d slowest packages (wall time of each package's tests):\n", min(top, len(times)))
	for _, t := range times[:min(top, len(times))] {
		fmt.Fprintf(out, "  %7.1fs  %s\n", t.elapsed, t.name)
	}
	return failed, nil
}
