// Package gen is keelgen's pure core: Generate runs the stages
//
//	load (go/packages) → model → schema (invopop/jsonschema)
//	→ contract (lock, version gate) → render (jennifer)
//
// and returns the files and every diagnostic. It reads the committed lock
// and schemas to compare with, and writes nothing.
package gen

import (
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/keelgen/keel/internal/contract"
	"github.com/keelgen/keel/internal/load"
	"github.com/keelgen/keel/internal/model"
	"github.com/keelgen/keel/internal/render"
	"github.com/keelgen/keel/internal/schema"
	"github.com/keelgen/keel/provider/ollama"
	"github.com/keelgen/keel/provider/openai"
	"github.com/keelgen/keel/runtime"
)

// Config says what to read and where the output package lives.
type Config struct {
	// Dir is the directory Pattern and a relative OutDir are resolved in.
	Dir string
	// Pattern names the one handler package (default ".").
	Pattern string
	// OutDir is the output package's directory.
	OutDir string
	// Targets names the providers whose limits to check at generate time:
	// "openai-strict" (tools that cannot be offered in strict mode) and
	// "ollama" (constraints Ollama's server drops). Findings are warnings.
	Targets []string
	// LockFile is the lock the version gate compares with (default: the
	// keel.lock.json in OutDir), e.g. the base branch's copy in CI.
	LockFile string
	// OutPkg is the output package's name (default: the package of the Go
	// files already in OutDir, else OutDir's base name).
	OutPkg string
}

// Result is what Generate produced.
type Result struct {
	OutDir string        // absolute
	Files  []render.File // paths relative to OutDir, in a fixed order
	// The contract: the lock compared with, the new lock, what changed,
	// and warnings (effect escalations) that do not stop generation.
	Previous *contract.Previous
	Lock     runtime.Lock
	Changes  []contract.ToolChange
	Warnings []model.Diagnostic
}

// Generate reads the handler package and renders its whitelist. A non-nil
// error means keelgen itself could not run (exit 2); diagnostics are problems
// in the user's code, all of them. With diagnostics the Result is nil, except
// when only the version gate refused: then it is returned for -diff, and must
// not be written.
func Generate(cfg Config) (*Result, []model.Diagnostic, error) {
	if cfg.Pattern == "" {
		cfg.Pattern = "."
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, nil, err
	}
	if cfg.OutDir == "" {
		return nil, nil, fmt.Errorf("no output directory given")
	}
	outDir := cfg.OutDir
	if !filepath.IsAbs(outDir) {
		outDir = filepath.Join(dir, outDir)
	}
	outPkg := cfg.OutPkg
	if outPkg == "" {
		outPkg = existingPackage(outDir)
	}
	if outPkg == "" {
		outPkg = packageName(filepath.Base(outDir))
	}
	if !token.IsIdentifier(outPkg) {
		return nil, nil, fmt.Errorf("output package name %q is not a Go identifier; set -pkg", outPkg)
	}

	for _, t := range cfg.Targets {
		if t != "openai-strict" && t != "ollama" {
			return nil, nil, fmt.Errorf("unknown target %q (targets are openai-strict, ollama)", t)
		}
	}
	pkg, diags, err := load.Load(dir, cfg.Pattern)
	if err != nil || len(diags) > 0 {
		return nil, diags, err
	}
	if filepath.Clean(pkg.Dir) == filepath.Clean(outDir) {
		return nil, nil, fmt.Errorf("the output directory is the handler package's own directory; the whitelist must be a separate package")
	}
	schemas, diags, err := schema.Generate(pkg)
	if err != nil || len(diags) > 0 {
		return nil, diags, err
	}

	// The contract stage: compare with the committed lock, gate versions.
	lockPath := cfg.LockFile
	if lockPath == "" {
		lockPath = filepath.Join(outDir, runtime.LockFileName)
	} else if !filepath.IsAbs(lockPath) {
		lockPath = filepath.Join(dir, lockPath)
	}
	prev, err := contract.ReadPrevious(lockPath, filepath.Join(outDir, render.SchemaDir))
	if err != nil {
		return nil, nil, err
	}
	changes, lock, err := contract.Compare(prev, contract.Infos(pkg, schemas))
	if err != nil {
		return nil, nil, err
	}
	refusals, warnings := contract.Gate(changes, pkg.Tools)
	lockFile, err := lock.Marshal()
	if err != nil {
		return nil, nil, err
	}
	files, err := render.Files(pkg, outPkg, schemas, lockFile, lock.SetDigest)
	if err != nil {
		return nil, nil, err
	}
	warnings = append(warnings, targetWarnings(cfg.Targets, pkg, schemas)...)
	res := &Result{OutDir: outDir, Files: files, Previous: prev, Lock: lock, Changes: changes, Warnings: warnings}
	return res, refusals, nil
}

// targetWarnings reports, at each tool's directive, what a target provider
// cannot take of its input schema.
func targetWarnings(targets []string, pkg *model.Package, schemas map[string]render.Schemas) []model.Diagnostic {
	var out []model.Diagnostic
	for _, target := range targets {
		for _, t := range pkg.Tools {
			in := schemas[t.Name].Input
			switch target {
			case "openai-strict":
				for _, p := range openai.StrictProblems(in) {
					out = append(out, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("warning: %s: not offered in OpenAI strict mode: %s", t.Name, p)})
				}
			case "ollama":
				if lost := ollama.Lost(in); len(lost) > 0 {
					out = append(out, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("warning: %s: Ollama drops %s (the safe form repeats them in descriptions; keel still validates them)", t.Name, strings.Join(lost, ", "))})
				}
			}
		}
	}
	return out
}

// existingPackage returns the package name of the Go files already in dir,
// so a renamed directory keeps its package; "" when there are none.
func existingPackage(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	sort.Strings(files)
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
