// Command keelgen writes a keel tool set: from the //keel:tool functions of
// one Go package, a static dispatcher, argument types and JSON Schemas.
//
// Usage:
//
//	keelgen [-out dir] [-pkg name] [-check] [package]
//
// Typically run by go generate, from a line in the handler package:
//
//	//go:generate go tool keelgen -out ../generated
//
// Exit status: 0 on success (with -check: the files are current), 1 with
// -check when any file is stale, missing or orphaned, 2 on any error.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/keelgen/keel/internal/gen"
	"github.com/keelgen/keel/internal/output"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("keelgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "generated", "output package `directory`, relative to the current directory")
	pkg := fs.String("pkg", "", "output package `name` (default: the package already in the output directory, else its base name)")
	check := fs.Bool("check", false, "write nothing; exit 1 if any generated file is stale, missing or orphaned")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: keelgen [flags] [package]\n\n"+
			"keelgen reads the //keel:tool functions of one package (default \".\") and\n"+
			"writes its tool set: a Go file and one JSON Schema per tool input and output.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return 2
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, "keelgen:", err)
		return 2
	}
	res, diags, err := gen.Generate(gen.Config{Dir: wd, Pattern: fs.Arg(0), OutDir: *out, OutPkg: *pkg})
	if err != nil {
		fmt.Fprintln(stderr, "keelgen:", err)
		return 2
	}
	if len(diags) > 0 {
		for _, d := range diags {
			fmt.Fprintln(stderr, d.Format(wd))
		}
		fmt.Fprintf(stderr, "keelgen: %d problem(s); nothing written\n", len(diags))
		return 2
	}
	changes, err := output.Compare(res.OutDir, res.Files)
	if err != nil {
		fmt.Fprintln(stderr, "keelgen:", err)
		return 2
	}
	rel, err := filepath.Rel(wd, res.OutDir)
	if err != nil {
		rel = res.OutDir
	}
	if *check {
		if changes.Empty() {
			return 0
		}
		for _, l := range changes.Lines(filepath.ToSlash(rel)) {
			fmt.Fprintln(stderr, l)
		}
		fmt.Fprintln(stderr, "keelgen: generated files are not current; run go generate and commit the result")
		return 1
	}
	if err := output.Write(res.OutDir, res.Files, changes); err != nil {
		fmt.Fprintln(stderr, "keelgen:", err)
		return 2
	}
	return 0
}
