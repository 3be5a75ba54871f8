// Command keelgen writes a keel tool set: from the //keel:tool functions of
// one Go package, a static dispatcher, argument types, JSON Schemas, and
// keel.lock.json, the versioned contract of the set.
//
// Usage:
//
//	keelgen [-out dir] [-pkg name] [-targets list] [-lock file] [-check | -diff | -sign keyfile] [package]
//	keelgen -genkey file
//
// Typically run by go generate, from a line in the handler package:
//
//	//go:generate go tool keelgen -out ../generated
//
// Exit status: 0 on success (-check: the files are current; -diff: the tool
// set is unchanged), 1 when -check finds a stale, missing or orphaned file or
// -diff finds a change, 2 on any error or refused change.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/keelgen/keel/internal/contract"
	"github.com/keelgen/keel/internal/gen"
	"github.com/keelgen/keel/internal/output"
	"github.com/keelgen/keel/internal/signing"
	"github.com/keelgen/keel/runtime"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("keelgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "generated", "output package `directory`, relative to the current directory")
	pkg := fs.String("pkg", "", "output package `name` (default: the package already in the output directory, else its base name)")
	targets := fs.String("targets", "", "comma-separated `providers` whose limits to warn about: openai-strict, ollama")
	lock := fs.String("lock", "", "compare with this lock `file` instead of the output directory's keel.lock.json (e.g. the base branch's)")
	check := fs.Bool("check", false, "write nothing; exit 1 if any generated file is stale, missing or orphaned")
	diff := fs.Bool("diff", false, "write nothing; print what changed in the tool set against the lock, exit 1 if anything did")
	sign := fs.String("sign", "", "after writing, sign keel.lock.json with the ed25519 private key in `keyfile` (PEM, PKCS #8)")
	genkey := fs.String("genkey", "", "write a new ed25519 key pair to `file` (private) and file.pub (public), and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: keelgen [flags] [package]\n\n"+
			"keelgen reads the //keel:tool functions of one package (default \".\") and\n"+
			"writes its tool set: a Go file, one JSON Schema per tool input and output,\n"+
			"and keel.lock.json. A contract change without a version bump is refused.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	modes := 0
	for _, on := range []bool{*check, *diff, *sign != "", *genkey != ""} {
		if on {
			modes++
		}
	}
	if fs.NArg() > 1 || modes > 1 {
		fs.Usage()
		return 2
	}
	if *genkey != "" {
		if err := signing.GenerateKey(*genkey); err != nil {
			fmt.Fprintln(stderr, "keelgen:", err)
			return 2
		}
		fmt.Fprintf(stderr, "keelgen: wrote %s (keep it secret) and %s.pub\n", *genkey, *genkey)
		return 0
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, "keelgen:", err)
		return 2
	}
	var targetList []string
	if *targets != "" {
		targetList = strings.Split(*targets, ",")
	}
	res, diags, err := gen.Generate(gen.Config{Dir: wd, Pattern: fs.Arg(0), OutDir: *out, OutPkg: *pkg, LockFile: *lock, Targets: targetList})
	if err != nil {
		fmt.Fprintln(stderr, "keelgen:", err)
		return 2
	}
	if res != nil {
		for _, w := range res.Warnings {
			fmt.Fprintln(stderr, w.Format(wd))
		}
		if *diff {
			fmt.Fprint(stdout, contract.Diff(res.Previous, res.Lock, res.Changes))
		}
	}
	if len(diags) > 0 {
		for _, d := range diags {
			fmt.Fprintln(stderr, d.Format(wd))
		}
		fmt.Fprintf(stderr, "keelgen: %d problem(s); nothing written\n", len(diags))
		return 2
	}
	if *diff {
		if contract.AnyChange(res.Changes) {
			return 1
		}
		return 0
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
	if len(changes.Refused) > 0 {
		for _, l := range changes.RefusalLines(filepath.ToSlash(rel)) {
			fmt.Fprintln(stderr, l)
		}
		fmt.Fprintf(stderr, "keelgen: %d file(s) in the way; nothing written\n", len(changes.Refused))
		return 2
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
	if *sign != "" {
		if err := signing.SignLock(*sign, filepath.Join(res.OutDir, runtime.LockFileName)); err != nil {
			fmt.Fprintln(stderr, "keelgen:", err)
			return 2
		}
	}
	return 0
}
