// Package schema is keelgen's schema stage: it produces each tool's input
// and output JSON Schema with github.com/invopop/jsonschema from the real Go
// types. The reflector works on reflect.Type at run time, so keelgen writes a
// throwaway program into the handler package's directory (inside the user's
// module, so it builds with the user's go.mod), runs it, and deletes it.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/invopop/jsonschema"

	"github.com/keelgen/keel/internal/model"
	"github.com/keelgen/keel/internal/render"
)

const reflectorPkg = "github.com/invopop/jsonschema"

// Generate returns the formatted schemas of every tool in pkg, keyed by tool
// name. Schemas whose root is not an object come back as diagnostics.
func Generate(pkg *model.Package) (map[string]render.Schemas, []model.Diagnostic, error) {
	if len(pkg.Tools) == 0 {
		return map[string]render.Schemas{}, nil, nil
	}
	src, err := program(pkg)
	if err != nil {
		return nil, nil, err
	}
	raw, err := run(pkg.Dir, src)
	if err != nil {
		return nil, nil, err
	}
	var pairs map[string][2]json.RawMessage
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, nil, fmt.Errorf("reading reflected schemas: %w", err)
	}
	out := map[string]render.Schemas{}
	var diags []model.Diagnostic
	for _, t := range pkg.Tools {
		pair, ok := pairs[t.Name]
		if !ok {
			return nil, nil, fmt.Errorf("reflected schemas lack tool %s", t.Name)
		}
		var s render.Schemas
		for i, dst := range []*[]byte{&s.Input, &s.Output} {
			side := [2]string{"input", "output"}[i]
			if msg := checkRoot(pair[i]); msg != "" {
				diags = append(diags, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("%s: %s schema %s", t.Name, side, msg)})
				continue
			}
			if *dst, err = format(pair[i]); err != nil {
				return nil, nil, fmt.Errorf("formatting the %s schema of %s: %w", side, t.Name, err)
			}
		}
		out[t.Name] = s
	}
	return out, diags, nil
}

// checkRoot enforces the design's schema shape: an object at the root, every
// type inlined (many clients fail on $ref and $defs).
func checkRoot(doc []byte) string {
	var root jsonschema.Schema
	if err := json.Unmarshal(doc, &root); err != nil {
		return "is not a JSON Schema object"
	}
	if root.Type != "object" {
		return fmt.Sprintf("has root type %q; it must be \"object\"", root.Type)
	}
	if root.Ref != "" || len(root.Definitions) > 0 || bytes.Contains(doc, []byte(`"$ref"`)) {
		return "uses $ref; keel inlines every type"
	}
	return ""
}

// format indents a schema with two spaces and ends it with a newline. The
// reflector escapes <, > and & for HTML; strings are re-encoded minimally so
// a reviewer reads them as written.
func format(doc []byte) ([]byte, error) {
	v := jsontext.Value(bytes.Clone(doc))
	if err := v.Indent(jsontext.WithIndent("  "), jsontext.PreserveRawStrings(false)); err != nil {
		return nil, err
	}
	return append(v, '\n'), nil
}

// program writes the throwaway main package: the emitted argument structs,
// and a reflector configured for the design's schema shape.
func program(pkg *model.Package) ([]byte, error) {
	f := jen.NewFile("main")
	f.HeaderComment(render.Header)
	f.Comment("keelgen's throwaway schema program; it deletes it after running it.")
	for _, t := range pkg.Tools {
		if t.Form == model.PlainParams {
			f.Add(render.ArgsStruct(t))
		}
	}
	keys := make([]string, 0, len(pkg.Comments))
	for k := range pkg.Comments {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	comments := jen.Dict{}
	for _, k := range keys {
		comments[jen.Lit(k)] = jen.Lit(pkg.Comments[k])
	}
	typeOf := func(c jen.Code) jen.Code {
		return jen.Id("reflectType").Call(jen.Qual("reflect", "TypeFor").Types(c).Call())
	}
	f.Func().Id("main").Params().Block(
		jen.Id("r").Op(":=").Op("&").Qual(reflectorPkg, "Reflector").Values(jen.Dict{
			jen.Id("DoNotReference"): jen.True(), // inline every type
			jen.Id("Anonymous"):      jen.True(), // no $id derived from the package path
			jen.Id("CommentMap"):     jen.Map(jen.String()).String().Values(comments),
		}),
		jen.Id("reflectType").Op(":=").Func().Params(jen.Id("t").Qual("reflect", "Type")).Op("*").Qual(reflectorPkg, "Schema").Block(
			jen.Id("s").Op(":=").Id("r").Dot("ReflectFromType").Call(jen.Id("t")),
			jen.Id("s").Dot("Version").Op("=").Lit(""), // the runtime compiles as 2020-12
			jen.Return(jen.Id("s")),
		),
		jen.Id("out").Op(":=").Map(jen.String()).Index(jen.Lit(2)).Op("*").Qual(reflectorPkg, "Schema").Values(jen.DictFunc(func(d jen.Dict) {
			for _, t := range pkg.Tools {
				d[jen.Lit(t.Name)] = jen.Values(typeOf(render.ArgsType(t)), typeOf(render.TypeCode(t.Result)))
			}
		})),
		jen.If(jen.Err().Op(":=").Qual("encoding/json", "NewEncoder").Call(jen.Qual("os", "Stdout")).Dot("Encode").Call(jen.Id("out")), jen.Err().Op("!=").Nil()).Block(
			jen.Qual("fmt", "Fprintln").Call(jen.Qual("os", "Stderr"), jen.Err()),
			jen.Qual("os", "Exit").Call(jen.Lit(1)),
		),
	)
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render schema program: %w", err)
	}
	return buf.Bytes(), nil
}

// run builds and runs the program in a temporary directory inside dir and
// returns its standard output. The directory is removed in every case.
func run(dir string, src []byte) ([]byte, error) {
	tmp, err := os.MkdirTemp(dir, ".keelgen-schema-")
	if err != nil {
		return nil, fmt.Errorf("schema program: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "main.go"), src, 0o644); err != nil {
		return nil, fmt.Errorf("schema program: %w", err)
	}
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = tmp
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(strings.ReplaceAll(stderr.String(), tmp+string(filepath.Separator), ""))
		hint := ""
		if strings.Contains(msg, reflectorPkg) {
			hint = "\n(the module needs " + reflectorPkg + ": add the keelgen tool to it, see the README)"
		}
		return nil, fmt.Errorf("running the schema program: %v\n%s%s", err, msg, hint)
	}
	return stdout.Bytes(), nil
}
