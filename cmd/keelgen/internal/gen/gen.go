// Package gen is keelgen's core: Generate runs the stages
//
//	load (go/packages) → model → schema (invopop/jsonschema)
//	→ contract (lock, version gate) → render (jennifer)
//
// and returns the files and every diagnostic. It reads the handler package,
// the committed lock and schemas, and runs the schema program (go run); it
// writes nothing: the command writes, and only a Result that may be written.
// While the schema program runs, the stages after it go ahead on the
// committed schemas, a guess kept only when the program gives those bytes.
package gen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/sync/errgroup"

	"github.com/keelgen/keel/cmd/keelgen/internal/contract"
	"github.com/keelgen/keel/cmd/keelgen/internal/files"
	"github.com/keelgen/keel/cmd/keelgen/internal/load"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/cmd/keelgen/internal/render"
	"github.com/keelgen/keel/cmd/keelgen/internal/schema"
	"github.com/keelgen/keel/internal/lockfile"
	"github.com/keelgen/keel/internal/question"
	"github.com/keelgen/keel/internal/schemamodel"
	"github.com/keelgen/keel/internal/toolrules"
)

// SchemaSource is the schema stage: the input and output schema of every
// tool of a package. schema.Program is the real one; tests of other stages
// may give another.
type SchemaSource interface {
	Schemas(pkg *model.Package) (map[string]model.Schemas, []model.Diagnostic, error)
}

// Config says what to read and where the output package lives.
type Config struct {
	// Dir is the directory Patterns and a relative OutDir are resolved in.
	Dir string
	// Patterns name the handler packages (default "."): one tool set is
	// generated from all of them.
	Patterns []string
	// Defer names the tools of this set a model loads on demand, through a
	// provider's tool search, instead of up front ("*": every tool);
	// Upfront excepts some of them. Deferred tools are grouped by their
	// handler package's name.
	Defer, Upfront []string
	// Tools, when set, selects the tools of this set by exact name: a tool
	// added to a handler package joins no set that does not name it. An
	// empty list means every tool of the packages.
	Tools []string
	// OutDir is the output package's directory.
	OutDir string
	// Targets names the providers whose limits to check at generate time
	// (see Targets). Findings are warnings.
	Targets []string
	// LockFile is the lock the version gate compares with (default: the
	// keel.lock.json in OutDir), e.g. the base branch's copy in CI. Schema
	// files in a schemas directory beside it explain how its schemas
	// changed.
	LockFile string
	// LockName names that lock in messages (default: LockFile as given,
	// else keel.lock.json).
	LockName string
	// OutPkg is the output package's name (default: the package of the Go
	// files already in OutDir, else OutDir's base name).
	OutPkg string
	// Schemas is the schema stage (default schema.Program{}).
	Schemas SchemaSource
	// Lint adds warnings about what the model reads: plain parameters
	// without a //keel:param description, and Go parameter names in a
	// description where the model knows the JSON name. Without it they are
	// only counted (Result.LintFindings).
	Lint bool
	// Shared, when set, holds this run's packages already read and
	// reflected with others' (keelgen's tests): no go command runs.
	Shared *Shared
	// Progress, when set, is told what keelgen is doing during a stage
	// that takes more than a moment (a first run compiles the packages'
	// dependencies and the schema program's).
	Progress io.Writer
}

// Result is what Generate produced. Diagnostics are problems in the user's
// code; a Result with any may not be written (Writable says so), but its
// contract fields still serve -diff when only the version gate refused.
type Result struct {
	OutDir      string        // absolute
	Files       []render.File // paths relative to OutDir, in a fixed order; nil when loading or schemas failed
	Diagnostics []model.Diagnostic
	Warnings    []model.Diagnostic
	// Required lists every member of each tool's arguments as required or
	// optional, and why (keelgen -required).
	Required []string
	// LintFindings counts what -lint reports; with Config.Lint they are
	// among the Warnings.
	LintFindings int
	// The contract: the lock compared with, the new lock, and what changed.
	Previous *contract.Previous
	Lock     lockfile.Lock
	Changes  []contract.ToolChange
}

// Writable reports whether the files may be written: no diagnostics.
func (r *Result) Writable() bool { return len(r.Diagnostics) == 0 && r.Files != nil }

// Generate reads the handler package and renders its whitelist. An error
// means keelgen itself could not run (exit 2); problems in the user's code
// are the Result's Diagnostics, all of them.
func Generate(cfg Config) (*Result, error) {
	dir, outDir, outPkg, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	targets, err := targetsOf(cfg.Targets)
	if err != nil {
		return nil, err
	}
	read := load.Load
	if cfg.Shared != nil {
		read = cfg.Shared.loaded.Load
		if cfg.Schemas == nil {
			cfg.Schemas = cfg.Shared
		}
	}
	if cfg.Schemas == nil {
		cfg.Schemas = schema.Program{}
	}
	done := slowStage(cfg.Progress, "keelgen: loading and type-checking the handler packages (a first run compiles their dependencies)...")
	pkg, diags, err := read(dir, cfg.Patterns...)
	done()
	if err != nil || len(diags) > 0 {
		return &Result{OutDir: outDir, Diagnostics: diags}, err
	}
	if err := selectTools(pkg, cfg.Tools); err != nil {
		return nil, err
	}
	if err := deferTools(pkg, cfg.Defer, cfg.Upfront); err != nil {
		return nil, err
	}
	if filepath.Clean(pkg.Dir) == filepath.Clean(outDir) {
		return nil, errors.New("the output directory is the handler package's own directory; the whitelist must be a separate package")
	}
	return stages{cfg, dir, outDir, outPkg, targets, pkg}.afterLoad()
}

// targetsOf reads -targets' names.
func targetsOf(names []string) ([]Target, error) {
	var targets []Target
	for _, name := range names {
		t, ok := target(name)
		if !ok {
			return nil, fmt.Errorf("unknown target %q (targets are %s)", name, TargetNames())
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// afterLoad runs the schema stage and the rest. While the schema program
// runs (a subprocess, most of a run's wait), the rest goes ahead on the
// committed schema files: the rest is a function of the model and the
// schemas alone, so when the program gives those same bytes (an edit of
// handler code, a check in CI) the guess is this run's result; otherwise
// the rest runs again on the program's schemas.
func (s stages) afterLoad() (*Result, error) {
	var guess struct {
		res *Result
		err error
	}
	committed := make(chan map[string]model.Schemas, 1)
	stop, abandon := context.WithCancel(context.Background())
	var guessing sync.WaitGroup
	// No guess outlives the run: an abandoned one is waited for, after the
	// run it gave way to.
	defer guessing.Wait()
	defer abandon()
	guessing.Go(func() {
		c := committedSchemas(s.outDir, s.pkg)
		committed <- c
		if c != nil {
			guess.res, guess.err = s.finish(stop, c)
		}
	})
	done := slowStage(s.cfg.Progress, "keelgen: building and running the schema program (a first run compiles the schema reflector; later runs are cached)...")
	schemas, diags, err := s.cfg.Schemas.Schemas(s.pkg)
	done()
	if c := <-committed; err == nil && len(diags) == 0 && c != nil && sameSchemas(c, schemas) {
		guessing.Wait()
		return guess.res, guess.err
	}
	// A wrong guess stops at its next stage.
	abandon()
	if err != nil || len(diags) > 0 {
		return &Result{OutDir: s.outDir, Diagnostics: diags}, err
	}
	return s.finish(context.Background(), schemas)
}

// stages is what the stages after the schema program, the rest of a run,
// work from.
type stages struct {
	cfg                 Config
	dir, outDir, outPkg string
	targets             []Target
	pkg                 *model.Package
}

// finish is every stage after the schemas: compiling them, the contract,
// the files and the warnings. A guess abandoned (ctx done) returns at its
// next stage with ctx's error.
func (s stages) finish(ctx context.Context, schemas map[string]model.Schemas) (*Result, error) {
	cfg, pkg := s.cfg, s.pkg
	res := &Result{OutDir: s.outDir}
	if diags := compileSchemas(pkg, schemas); len(diags) > 0 {
		res.Diagnostics = diags
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := res.compareContract(cfg, s.dir, pkg, schemas); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lockFile, err := res.Lock.Marshal()
	if err != nil {
		return nil, err
	}
	// The lint only reads the model and the schemas: it runs while the
	// files print.
	var findings []model.Diagnostic
	var linted sync.WaitGroup
	linted.Go(func() { findings = lint(pkg, schemas) })
	files, diags, err := render.Files(pkg, s.outPkg, schemas, lockFile, res.Lock.SetDigest)
	linted.Wait()
	if err != nil {
		return nil, err
	}
	if files == nil {
		res.Diagnostics = append(res.Diagnostics, diags...)
		return res, nil
	}
	res.Files, res.Warnings = files, append(res.Warnings, diags...)
	res.Warnings = append(res.Warnings, targetWarnings(s.targets, pkg, schemas)...)
	res.LintFindings = len(findings)
	res.Required = requiredReport(pkg, schemas)
	if cfg.Lint {
		res.Warnings = append(res.Warnings, findings...)
	}
	return res, nil
}

// committedSchemas reads the schema files of every tool from the output
// directory, or returns nil when one is missing (a new tool, a first run).
func committedSchemas(outDir string, pkg *model.Package) map[string]model.Schemas {
	out := make(map[string]model.Schemas, len(pkg.Tools))
	for _, t := range pkg.Tools {
		in, err := os.ReadFile(filepath.Join(outDir, filepath.FromSlash(files.InputSchemaFile(t.Name))))
		if err != nil {
			return nil
		}
		o, err := os.ReadFile(filepath.Join(outDir, filepath.FromSlash(files.OutputSchemaFile(t.Name))))
		if err != nil {
			return nil
		}
		out[t.Name] = model.Schemas{Input: in, Output: o}
	}
	return out
}

// sameSchemas reports whether a and b hold the same bytes for the same tools.
func sameSchemas(a, b map[string]model.Schemas) bool {
	if len(a) != len(b) {
		return false
	}
	for name, s := range a {
		t, ok := b[name]
		if !ok || !bytes.Equal(s.Input, t.Input) || !bytes.Equal(s.Output, t.Output) {
			return false
		}
	}
	return true
}

// slowAfter is how long a stage runs before keelgen says what it is doing.
var slowAfter = 2 * time.Second

// slowStage prints msg to w once the stage has run for slowAfter, so a warm
// run stays quiet and a cold one does not look hung; the returned func ends
// the stage.
func slowStage(w io.Writer, msg string) (done func()) {
	if w == nil {
		return func() {}
	}
	printed := make(chan struct{})
	t := time.AfterFunc(slowAfter, func() {
		fmt.Fprintln(w, msg)
		close(printed)
	})
	return func() {
		if !t.Stop() {
			<-printed // it fired: let it finish before the caller writes on
		}
	}
}

// compileSchemas compiles every schema as the executor will: an executor
// of a locked set compiles them on first use, trusting that keelgen did.
func compileSchemas(pkg *model.Package, schemas map[string]model.Schemas) []model.Diagnostic {
	// Each distinct document is compiled once, on every core: a set's
	// tools often share a type, and compiling is most of this stage.
	index := map[string]int{} // document → its place in docs
	var docs [][]byte
	for _, t := range pkg.Tools {
		for _, doc := range [][]byte{schemas[t.Name].Input, schemas[t.Name].Output} {
			if _, ok := index[string(doc)]; !ok {
				index[string(doc)] = len(docs)
				docs = append(docs, doc)
			}
		}
	}
	found := make([]error, len(docs))
	var g errgroup.Group
	g.SetLimit(goruntime.GOMAXPROCS(0))
	for i, doc := range docs {
		g.Go(func() error { _, found[i] = toolrules.CompileSchema("check", doc); return nil })
	}
	g.Wait()
	var diags []model.Diagnostic
	for _, t := range pkg.Tools {
		s := schemas[t.Name]
		if t.Approve != "" {
			var members []string
			if root, err := schemamodel.Parse(s.Input); err == nil {
				members = root.PropertyNames()
			}
			if problem := question.ApproveMembers(t.Approve, members); problem != "" {
				diags = append(diags, model.Diagnostic{Pos: t.ApprovePos, Message: fmt.Sprintf("%s: //keel:approve %s", t.Name, problem)})
			}
		}
		for _, side := range []struct {
			name string
			doc  []byte
		}{{"input", s.Input}, {"output", s.Output}} {
			patterns := patternProblems(side.doc) // said member by member, in order, rather than in the validator's words
			for _, p := range patterns {
				diags = append(diags, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("%s: %s schema at %s: %s", t.Name, side.name, p.at, p.problem)})
			}
			if err := found[index[string(side.doc)]]; err != nil && len(patterns) == 0 {
				diags = append(diags, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("%s: %s schema does not compile: %v", t.Name, side.name, err)})
			}
		}
	}
	return diags
}

// patternProblem is a pattern of a schema that ECMA-262, which JSON
// Schema's patterns follow, reads otherwise than RE2 in a way keel cannot
// translate, at its JSON pointer.
type patternProblem struct{ at, problem string }

// patternProblems lists them in the schema's order.
func patternProblems(doc []byte) []patternProblem {
	root, err := schemamodel.Parse(doc)
	if err != nil {
		return nil
	}
	var out []patternProblem
	root.Walk(func(sub *schemamodel.Schema, at jsontext.Pointer) {
		if sub.Pattern == "" {
			return
		}
		if _, err := toolrules.ECMAPattern(sub.Pattern); err != nil {
			out = append(out, patternProblem{string(at), fmt.Sprintf("pattern %q reads otherwise in ECMA-262, which JSON Schema's patterns follow, than in Go's RE2: %v", sub.Pattern, err)})
		}
	})
	return out
}

// resolve makes the directories absolute and picks the output package name.
func resolve(cfg Config) (dir, outDir, outPkg string, err error) {
	if dir, err = filepath.Abs(cfg.Dir); err != nil {
		return "", "", "", err
	}
	if cfg.OutDir == "" {
		return "", "", "", errors.New("no output directory given")
	}
	outDir = cfg.OutDir
	if !filepath.IsAbs(outDir) {
		outDir = filepath.Join(dir, outDir)
	}
	outPkg = cfg.OutPkg
	if outPkg == "" {
		outPkg = existingPackage(outDir)
	}
	if outPkg == "" {
		outPkg = packageName(filepath.Base(outDir))
	}
	if !token.IsIdentifier(outPkg) {
		return "", "", "", fmt.Errorf("output package name %q is not a Go identifier; set -pkg", outPkg)
	}
	return dir, outDir, outPkg, nil
}

// compareContract is the contract stage: compare with the committed lock
// and gate versions. A refused change is a diagnostic; an escalation a
// warning.
func (r *Result) compareContract(cfg Config, dir string, pkg *model.Package, schemas map[string]model.Schemas) error {
	lockPath, lockName := cfg.LockFile, cfg.LockName
	if lockPath == "" {
		lockPath = filepath.Join(r.OutDir, lockfile.FileName)
	} else if !filepath.IsAbs(lockPath) {
		lockPath = filepath.Join(dir, lockPath)
	}
	if lockName == "" {
		lockName = cfg.LockFile
	}
	if lockName == "" {
		lockName = lockfile.FileName
	}
	// The schema files beside the lock explain its digests (a base
	// revision's, say); the output directory's explain the committed lock's.
	prev, err := contract.ReadPrevious(lockPath, filepath.Join(filepath.Dir(lockPath), files.SchemaDir), filepath.Join(r.OutDir, files.SchemaDir))
	if err != nil {
		return err
	}
	changes, lock, err := contract.Compare(prev, contract.Infos(pkg, schemas))
	if err != nil {
		return err
	}
	r.Previous, r.Lock, r.Changes = prev, lock, changes
	r.Diagnostics, r.Warnings = contract.Gate(changes, pkg.Tools, lockName)
	return nil
}

// existingPackage returns the package name of the Go files already in dir,
// so a renamed directory keeps its package; "" when there are none.
func existingPackage(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go")) // sorted
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		if af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly); err == nil {
			return af.Name.Name
		}
	}
	return ""
}

// packageName turns a directory name into a package name: "keel-tools" →
// "keeltools".
func packageName(base string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
