// Package render is keelgen's last stage: from the model and the schemas it
// writes, with jennifer, the Go files of the compiled whitelist
// (keel_tools.go, and keel_codecs.go with the readers and writers), the
// schema files and the lock. It is pure: it returns files and writes
// nothing. Each Go file is planned first, every question to the model and
// go/types, every name and every diagnostic (tools_plan.go; plan*.go and
// checks.go for keel_codecs.go), and then printed from its plan
// (tools_emit.go; emit*.go and checks_emit.go), which cannot fail.
package render

import (
	"bytes"
	"cmp"
	"fmt"
	"go/parser"
	"go/token"
	"strings"
	"sync"

	"github.com/dave/jennifer/jen"
	"golang.org/x/tools/imports"

	"github.com/keelgen/keel/cmd/keelgen/internal/files"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

const runtimePkg = "github.com/keelgen/keel/runtime"

// handshake is the runtime constant generated code references: a runtime
// older than this generator fails to compile it.
const handshake = "IsAtLeastVersion0_6_0"

// File is one output file (files.File).
type File = files.File

// Files renders the output package outPkg for pkg, with its lock file and
// set digest. Tools are already sorted by name, so the output is
// deterministic. A schema keyword the generated checks cannot express is a
// diagnostic, and then there are no files; with files, the diagnostics
// returned are warnings.
func Files(pkg *model.Package, outPkg string, schemas map[string]model.Schemas, lockFile []byte, setDigest string) ([]File, []model.Diagnostic, error) {
	for _, t := range pkg.Tools {
		if _, ok := schemas[t.Name]; !ok {
			return nil, nil, fmt.Errorf("no schema for tool %s", t.Name)
		}
	}
	codecs, diags, err := planCodecs(pkg, schemas)
	if err != nil || len(diags) > 0 {
		return nil, diags, err
	}
	names := planImports(pkg, outPkg)
	tools := planTools(pkg, outPkg, setDigest, names, codecs.binders)

	// The two files print from their plans alone, so at once.
	var codecSrc []byte
	var codecErr error
	var wg sync.WaitGroup
	wg.Go(func() { codecSrc, codecErr = emitCodecs(codecs, names, outPkg) })
	toolsSrc, err := emitTools(tools)
	wg.Wait()
	if err = cmp.Or(err, codecErr); err != nil {
		return nil, nil, err
	}
	out := []File{{Path: files.GoFileName, Content: toolsSrc}, {Path: files.CodecFileName, Content: codecSrc}, {Path: files.LockFileName, Content: lockFile}}
	for _, t := range pkg.Tools {
		s := schemas[t.Name]
		out = append(out,
			File{Path: files.InputSchemaFile(t.Name), Content: s.Input},
			File{Path: files.OutputSchemaFile(t.Name), Content: s.Output})
	}
	return out, codecs.warnings, nil
}

// lineText turns text into // comment lines; jennifer would otherwise render
// a multi-line comment as /* */.
func lineText(text string) string {
	return "// " + strings.ReplaceAll(text, "\n", "\n// ")
}

func lineComment(text string) jen.Code { return jen.Comment(lineText(text)) }

// printFile prints f, gofmt'ed by jennifer, its imports grouped; name is
// the file's, for an error.
func printFile(f *jen.File, name string) ([]byte, error) {
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	src, err := groupImports(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	return src, nil
}

// groupImports groups the import block jennifer writes as goimports does
// (the standard library first, then the rest), by running
// golang.org/x/tools/imports over that block alone: jennifer's output
// around it is gofmt'ed already, so no second pass over a large file.
func groupImports(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "", src, parser.ImportsOnly)
	if err != nil || len(file.Imports) == 0 {
		return src, err
	}
	decl := file.Decls[0]
	start, end := fset.Position(decl.Pos()).Offset, fset.Position(decl.End()).Offset
	const clause = "package p\n\n"
	block, err := imports.Process("", append([]byte(clause), src[start:end]...), &imports.Options{FormatOnly: true, Comments: true, TabIndent: true, TabWidth: 8})
	if err != nil {
		return nil, err
	}
	block = bytes.TrimSuffix(bytes.TrimPrefix(block, []byte(clause)), []byte("\n"))
	return append(append(append([]byte{}, src[:start]...), block...), src[end:]...), nil
}
