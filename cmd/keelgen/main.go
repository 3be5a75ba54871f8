// Command keelgen writes a keel tool set: from the //keel:tool functions of
// one or more Go packages, a static dispatcher, argument types, JSON
// Schemas, and keel.lock.json, the versioned contract of the set.
//
// Usage:
//
//	keelgen [-out dir] [-pkg name] [-tools names] [-defer names [-upfront names]] [-targets list] [-lock file | -base rev] [-lint] [-check | -diff | -required | -sign keyfile] [packages]
//	keelgen -genkey file
//
// Typically run by go generate, from a line in the handler package:
//
//	//go:generate go tool keelgen -out ../generated
//
// KEELGEN_MODE=check (or diff) in the environment turns every keelgen run
// into -check (or -diff), and KEELGEN_BASE=rev sets -base, so that
//
//	KEELGEN_MODE=check go generate -run keelgen ./...
//
// checks every tool set of a module with the flags of its own go:generate
// line.
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
	"runtime/debug"
	"strings"

	"github.com/keelgen/keel/cmd/keelgen/internal/contract"
	"github.com/keelgen/keel/cmd/keelgen/internal/gen"
	"github.com/keelgen/keel/cmd/keelgen/internal/output"
	"github.com/keelgen/keel/cmd/keelgen/internal/signing"
	"github.com/keelgen/keel/internal/lockfile"
)

// Exit codes.
const (
	exitOK      = 0
	exitChanged = 1 // -check: not current; -diff: changed
	exitError   = 2
)

func main() {
	// keelgen runs for a second and exits: collecting garbage a quarter as
	// often costs about 40 MiB more at 1,000 tools and a tenth of the run.
	// GOGC, when set, decides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the parsed flags.
type options struct {
	out, pkg, targets, lock, base, sign, genkey, tools string
	deferred, upfront                                  string
	check, diff, lint, required                        bool
	patterns                                           []string
	mode                                               mode // chosen once, from the flags
}

// mode is what a run does: each is one function below, chosen once by
// parseFlags.
type mode int

const (
	modeWrite    mode = iota // go generate: write the files (and sign the lock with -sign)
	modeCheck                // -check: compare, write nothing
	modeDiff                 // -diff: print the contract's changes, write nothing
	modeLint                 // -lint alone: print the findings, write nothing
	modeRequired             // -required: print each member as required or optional
	modeGenkey               // -genkey: write a key pair, read no package
)

func run(args []string, stdout, stderr io.Writer) int {
	wd, err := os.Getwd()
	if err != nil {
		return fail(stderr, err)
	}
	return runIn(wd, append(envFlags(os.Getenv), args...), stdout, stderr)
}

// envFlags are the flags KEELGEN_MODE and KEELGEN_BASE stand for, placed
// before the go:generate line's own.
func envFlags(getenv func(string) string) []string {
	var out []string
	switch mode := getenv("KEELGEN_MODE"); mode {
	case "check", "diff":
		out = append(out, "-"+mode)
	case "":
	default:
		out = append(out, "-KEELGEN_MODE="+mode) // refused by the flag parser, by name
	}
	if base := getenv("KEELGEN_BASE"); base != "" {
		out = append(out, "-base", base)
	}
	return out
}

// runIn is the command run in directory wd: every relative path in args is
// relative to it. It generates once, prints what every mode prints, and
// hands the result to its mode.
func runIn(wd string, args []string, stdout, stderr io.Writer) int {
	o, ok := parseFlags(args, stderr)
	if !ok {
		return exitError
	}
	if o.mode == modeGenkey {
		return genkey(inDir(wd, o.genkey), stderr)
	}
	if o.mode == modeWrite && !checkSetLine(wd, o, stderr) {
		return exitError
	}
	cfg, cleanup, err := config(wd, o, stderr)
	if err != nil {
		return fail(stderr, err)
	}
	defer cleanup()
	res, err := gen.Generate(cfg)
	if err != nil {
		return fail(stderr, err)
	}
	c := command{o: o, wd: wd, at: moduleRoot(wd), stdout: stdout, stderr: stderr}
	c.warn(res)
	if o.mode == modeDiff && res.Files != nil {
		fmt.Fprint(stdout, contract.Diff(res.Previous, res.Lock, res.Changes)) // also when the gate refused
	}
	if !res.Writable() {
		return c.refuse(res)
	}
	switch o.mode {
	case modeDiff:
		return c.changed(res)
	case modeRequired:
		return c.required(res)
	case modeLint:
		return exitOK // the findings are printed; nothing is written
	case modeCheck:
		return c.check(res)
	}
	return c.write(res)
}

// config is the generator's configuration from the flags; cleanup removes
// what -base took out of git.
func config(wd string, o options, progress io.Writer) (gen.Config, func(), error) {
	cfg := gen.Config{Dir: wd, Patterns: o.patterns, OutDir: o.out, OutPkg: o.pkg, LockFile: o.lock, Lint: o.lint, Progress: progress,
		Tools: list(o.tools), Targets: list(o.targets), Defer: list(o.deferred), Upfront: list(o.upfront)}
	if o.base == "" {
		return cfg, func() {}, nil
	}
	base, err := baseLock(inDir(wd, o.out), o.base)
	if err != nil {
		return cfg, nil, err
	}
	cfg.LockFile, cfg.LockName = base.lock, base.name
	return cfg, func() { os.RemoveAll(base.dir) }, nil
}

// list splits a comma-separated flag; "" is none.
func list(flag string) []string {
	if flag == "" {
		return nil
	}
	return strings.Split(flag, ",")
}

// command is one run's output: where it prints, and from where positions
// are relative (the module's root, as a reviewer and CI read them,
// wherever the run started).
type command struct {
	o              options
	wd, at         string
	stdout, stderr io.Writer
}

// warn prints the warnings, and counts the lint findings -lint would show.
func (c command) warn(res *gen.Result) {
	for _, w := range res.Warnings {
		fmt.Fprintln(c.stderr, w.Format(c.at))
	}
	if !c.o.lint && c.o.mode != modeCheck && c.o.mode != modeDiff && res.LintFindings > 0 {
		fmt.Fprintf(c.stderr, "keelgen: %d lint finding(s) about what the model reads (members without a description, Go names); add -lint to see them\n", res.LintFindings)
	}
}

// refuse prints the problems of a result that may not be written.
func (c command) refuse(res *gen.Result) int {
	for _, d := range res.Diagnostics {
		fmt.Fprintln(c.stderr, d.Format(c.at))
	}
	fmt.Fprintf(c.stderr, "keelgen: %d problem(s)%s\n", len(res.Diagnostics), nothingWritten(c.o))
	return exitError
}

// changed is -diff's status: the diff is printed; 1 when anything changed.
func (c command) changed(res *gen.Result) int {
	if contract.AnyChange(res.Changes) {
		return exitChanged
	}
	return exitOK
}

// required is -required: a report; nothing is written.
func (c command) required(res *gen.Result) int {
	for _, line := range res.Required {
		fmt.Fprintln(c.stdout, line)
	}
	return exitOK
}

func parseFlags(args []string, stderr io.Writer) (options, bool) {
	var o options
	fs := flag.NewFlagSet("keelgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.out, "out", "generated", "output package `directory`, relative to the current directory")
	fs.StringVar(&o.pkg, "pkg", "", "output package `name` (default: the package already in the output directory, else its base name)")
	fs.StringVar(&o.tools, "tools", "", "comma-separated tool `names`: generate a set of exactly these (default: every tool of the packages)")
	fs.StringVar(&o.deferred, "defer", "", "comma-separated tool `names` (* for all) a model loads on demand through a provider's tool search, not up front")
	fs.StringVar(&o.upfront, "upfront", "", "comma-separated tool `names` -defer leaves up front (with -defer *)")
	fs.StringVar(&o.targets, "targets", "", "comma-separated `providers` whose limits to warn about: "+gen.TargetNames())
	fs.StringVar(&o.lock, "lock", "", "compare with this lock `file` instead of the output directory's keel.lock.json (e.g. the base branch's); schema files in a schemas directory beside it explain its digests")
	fs.StringVar(&o.base, "base", "", "compare with the lock and schema files of the output directory at git `revision` (e.g. origin/main), read with git show")
	fs.BoolVar(&o.check, "check", false, "write nothing; exit 1 if any generated file is stale, missing or orphaned")
	fs.BoolVar(&o.lint, "lint", false, "write nothing; warn about what the model reads: schema members without a description, Go names in tool descriptions")
	fs.BoolVar(&o.required, "required", false, "write nothing; list each member of every tool's arguments as required or optional, and why (its json tag, or a handler parameter)")
	fs.BoolVar(&o.diff, "diff", false, "write nothing; print what changed in the tool set against the lock, exit 1 if anything did")
	fs.StringVar(&o.sign, "sign", "", "after writing, sign keel.lock.json with the ed25519 private key in `keyfile` (PEM, PKCS #8)")
	fs.StringVar(&o.genkey, "genkey", "", "write a new ed25519 key pair to `file` (private) and file.pub (public), and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: keelgen [flags] [packages]\n\n"+
			"keelgen reads the //keel:tool functions of the packages (default \".\"; patterns\n"+
			"like ./tools/... work) and writes one tool set: a Go file, one JSON Schema per\n"+
			"tool input and output, and keel.lock.json. A contract change without a version\n"+
			"bump is refused.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, false
	}
	o.patterns = fs.Args()
	if !o.settle(stderr) {
		fs.Usage()
		return o, false
	}
	return o, true
}

// settle refuses flags that contradict each other and picks the mode.
func (o *options) settle(stderr io.Writer) bool {
	switch {
	case o.lock != "" && o.base != "":
		fmt.Fprintln(stderr, "keelgen: -lock and -base both name the lock to compare with; give one")
		return false
	case o.lint && o.sign != "":
		fmt.Fprintln(stderr, "keelgen: -lint writes nothing, so there is nothing for -sign to sign; give one")
		return false
	}
	modes := 0
	for _, on := range []bool{o.check, o.diff, o.sign != "", o.genkey != "", o.required} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		fmt.Fprintln(stderr, "keelgen: -check, -diff, -sign, -genkey and -required each choose what keelgen does; give one")
		return false
	}
	switch {
	case o.genkey != "":
		o.mode = modeGenkey
	case o.check:
		o.mode = modeCheck
	case o.diff:
		o.mode = modeDiff
	case o.required:
		o.mode = modeRequired
	case o.lint:
		o.mode = modeLint
	}
	return true
}

// compare compares the output directory with the result; a file keelgen
// did not write, in the way, is a refusal.
func (c command) compare(res *gen.Result) (output.Changes, string, bool) {
	changes, err := output.Compare(res.OutDir, res.Files)
	if err != nil {
		fail(c.stderr, err)
		return changes, "", false
	}
	rel, err := filepath.Rel(c.wd, res.OutDir)
	if err != nil {
		rel = res.OutDir
	}
	rel = filepath.ToSlash(rel)
	if len(changes.Refused) > 0 {
		for _, l := range changes.RefusalLines(rel) {
			fmt.Fprintln(c.stderr, l)
		}
		fmt.Fprintf(c.stderr, "keelgen: %d file(s) in the way%s\n", len(changes.Refused), nothingWritten(c.o))
		return changes, rel, false
	}
	return changes, rel, true
}

// check is -check: 1, naming each file, when the output directory is not
// what go generate would write.
func (c command) check(res *gen.Result) int {
	changes, rel, ok := c.compare(res)
	if !ok {
		return exitError
	}
	if changes.Empty() {
		return exitOK
	}
	for _, l := range changes.Lines(rel) {
		fmt.Fprintln(c.stderr, l)
	}
	fmt.Fprintln(c.stderr, "keelgen: generated files are not current; run go generate and commit the result "+
		"(a set generated with other flags, such as -tools, is checked with them: KEELGEN_MODE=check go generate -run keelgen ./...)")
	return exitChanged
}

// write is go generate's run: the changed files written, orphans removed,
// and the lock signed with -sign.
func (c command) write(res *gen.Result) int {
	changes, _, ok := c.compare(res)
	if !ok {
		return exitError
	}
	if err := output.Write(res.OutDir, res.Files, changes); err != nil {
		return fail(c.stderr, err)
	}
	if c.o.sign != "" {
		if err := signing.SignLock(inDir(c.wd, c.o.sign), filepath.Join(res.OutDir, lockfile.FileName)); err != nil {
			return fail(c.stderr, err)
		}
	}
	return exitOK
}

// nothingWritten is what a refused run adds: only a run that would have
// written has anything not to write.
func nothingWritten(o options) string {
	if o.mode == modeCheck || o.mode == modeDiff {
		return ""
	}
	return "; nothing written"
}

// moduleRoot is the directory of the go.mod above dir, or dir.
func moduleRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

func inDir(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

func genkey(file string, stderr io.Writer) int {
	if err := signing.GenerateKey(file); err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stderr, "keelgen: wrote %s (keep it secret) and %s.pub\n", file, file)
	return exitOK
}

func fail(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "keelgen:", err)
	return exitError
}
