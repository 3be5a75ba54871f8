// Package schema is keelgen's schema stage: it produces each tool's input
// and output JSON Schema with github.com/invopop/jsonschema from the real Go
// types. The reflector works on reflect.Type at run time, so keelgen renders
// a throwaway program and runs it with go run as if it lived in the handler
// package's directory (so it builds with the user's go.mod): an -overlay
// places it there, and nothing is written into the user's tree. Its path
// is fixed, so the go command's cache answers a second run of the same
// program without a build.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/constant"
	"go/token"
	"go/types"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/go-json-experiment/json/jsontext"
	// The schema program imports the reflector, not keelgen; importing it
	// here too makes it a dependency of the keelgen tool, so go mod tidy in
	// a user's module keeps it (and its go.sum lines) even when nothing the
	// module builds imports it.
	_ "github.com/invopop/jsonschema"

	"github.com/keelgen/keel/cmd/keelgen/internal/files"
	"github.com/keelgen/keel/cmd/keelgen/internal/gocode"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/schemamodel"
)

const reflectorPkg = "github.com/invopop/jsonschema"

// Program is the schema stage as it runs for users: the reflector in a go
// run of a generated program.
type Program struct{}

// Schemas returns the formatted schemas of every tool in pkg, keyed by tool
// name. Schemas whose root is not an object come back as diagnostics.
func (Program) Schemas(pkg *model.Package) (map[string]model.Schemas, []model.Diagnostic, error) {
	if len(pkg.Tools) == 0 && len(pkg.Forms) == 0 {
		return map[string]model.Schemas{}, nil, nil
	}
	src, err := program(pkg)
	if err != nil {
		return nil, nil, err
	}
	raw, err := run(pkg.Dir, map[string][]byte{programDir + "/main.go": src}, programDir)
	if err != nil {
		return nil, nil, err
	}
	return Reflected(raw).Schemas(pkg)
}

// Reflected is what the schema program printed for one package: the
// reflector's schema of each tool's input and output, and of each form, by
// name, before keel's checks and forms.
type Reflected []byte

// Schemas finishes what the program reflected for pkg as Program does.
func (raw Reflected) Schemas(pkg *model.Package) (map[string]model.Schemas, []model.Diagnostic, error) {
	var pairs map[string][2]json.RawMessage
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, nil, fmt.Errorf("reading reflected schemas: %w", err)
	}
	var err error
	out := map[string]model.Schemas{}
	diags := forms(pkg, pairs, out)
	for _, t := range pkg.Tools {
		pair, ok := pairs[t.Name]
		if !ok {
			return nil, nil, fmt.Errorf("reflected schemas lack tool %s", t.Name)
		}
		var s model.Schemas
		for i, dst := range []*[]byte{&s.Input, &s.Output} {
			side := [2]string{"input", "output"}[i]
			doc, recursive := []byte(pair[i]), [2]bool{t.RecursiveInput, t.RecursiveOutput}[i]
			if recursive {
				if doc, err = keepRecursiveDefs(doc, i == 0); err != nil {
					diags = append(diags, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("%s: %s schema: %v", t.Name, side, err)})
					continue
				}
			}
			if msg := checkRoot(doc, recursive); msg != "" {
				diags = append(diags, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("%s: %s schema %s", t.Name, side, msg)})
				continue
			}
			if doc, err = nullForms(doc); err == nil {
				doc, err = typeForms(doc, sideType(t, i == 0), pkg, i == 1 && t.LibraryNulls)
			}
			if err != nil {
				diags = append(diags, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("%s: %s schema: %v", t.Name, side, err)})
				continue
			}
			if *dst, err = format(doc); err != nil {
				return nil, nil, fmt.Errorf("formatting the %s schema of %s: %w", side, t.Name, err)
			}
		}
		out[t.Name] = s
	}
	return out, diags, nil
}

// sideType is the Go type of a tool's arguments (input) or result: for
// plain parameters, a struct of them under their JSON names.
func sideType(t *model.Tool, input bool) types.Type {
	switch {
	case !input:
		return t.Result
	case t.Form == model.StructArgs:
		return t.Args
	}
	var fields []*types.Var
	var tags []string
	for _, p := range t.Params {
		fields = append(fields, types.NewField(token.NoPos, nil, p.Field, p.Type, false))
		tags = append(tags, `json:"`+p.JSONName+`"`)
	}
	return types.NewStruct(fields, tags)
}

// checkRoot enforces the design's schema shape: an object at the root, every
// type inlined (many clients fail on $ref and $defs) but a recursive one.
func checkRoot(doc []byte, recursive bool) string {
	var root struct { // not jsonschema.Schema: its type is one string, a member's may be a list
		Type any    `json:"type"`
		Ref  string `json:"$ref"`
		Defs any    `json:"$defs"`
	}
	if err := json.Unmarshal(doc, &root); err != nil {
		return "is not a JSON Schema object"
	}
	if root.Type != "object" {
		t, _ := json.Marshal(root.Type)
		return fmt.Sprintf("has root type %s; it must be \"object\"", t)
	}
	if !recursive && (root.Ref != "" || root.Defs != nil || bytes.Contains(doc, []byte(`"$ref"`))) {
		return "uses $ref; keel inlines every type but a recursive one"
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
	f.NoFormat = true // a throwaway no one reads: gofmt would be a tenth of the stage at scale
	f.HeaderComment(files.Header)
	f.Comment("keelgen's throwaway schema program: it prints the schemas of every tool's input and output.")
	declare(f, pkg)
	f.Func().Id("main").Params().Block(printed(jen.Id("Reflect").Call())...)
	return rendered(f)
}

// printed is a main's body: refuse an old reflector, then print v.
func printed(v jen.Code) []jen.Code {
	return []jen.Code{
		// A reflector older than v0.14 requires omitzero fields: the
		// schemas would silently differ from the reviewed ones.
		jen.If(jen.Len(jen.Parens(jen.Op("&").Qual(reflectorPkg, "Reflector").Values()).Dot("Reflect").Call(
			jen.Op("&").Struct(jen.Id("A").Int().Tag(map[string]string{"json": "a,omitzero"})).Values()).Dot("Required")).Op(">").Lit(0)).Block(
			jen.Qual("fmt", "Fprintln").Call(jen.Qual("os", "Stderr"), jen.Lit(reflectorTooOld)),
			jen.Qual("os", "Exit").Call(jen.Lit(1)),
		),
		jen.If(jen.Err().Op(":=").Qual("encoding/json", "NewEncoder").Call(jen.Qual("os", "Stdout")).Dot("Encode").Call(v), jen.Err().Op("!=").Nil()).Block(
			jen.Qual("fmt", "Fprintln").Call(jen.Qual("os", "Stderr"), jen.Err()),
			jen.Qual("os", "Exit").Call(jen.Lit(1)),
		),
	}
}

func rendered(f *jen.File) ([]byte, error) {
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render schema program: %w", err)
	}
	return buf.Bytes(), nil
}

// declare writes what reflects pkg's schemas into f: the argument structs,
// the tables of tools, forms, enums and comments, the reflector's helpers,
// and Reflect, which returns the schemas by name.
func declare(f *jen.File, pkg *model.Package) {
	for _, c := range gocode.ArgsStructs(pkg.Tools) {
		f.Add(c)
	}
	comments := jen.Dict{}
	for _, k := range slices.Sorted(maps.Keys(pkg.Comments)) {
		comments[jen.Lit(k)] = jen.Lit(pkg.Comments[k])
	}
	// The tools are a table of static data, not calls: a nil pointer to
	// each type costs the compiler nothing to initialize, where a call of
	// reflect.TypeFor per type made compiling the program most of its time
	// at scale.
	nilOf := func(c jen.Code) jen.Code { return jen.Parens(jen.Op("*").Add(c)).Parens(jen.Nil()) }
	// Every package-level name of the program has a capital letter, so no
	// import can take it: jennifer names imports in lower case.
	f.Comment("toolRow is one tool: its name, nil pointers to its input and output types, and whether each")
	f.Comment("is reflected with $defs and $ref (a recursive type, which has no inline form).")
	f.Type().Id("toolRow").Struct(
		jen.Id("name").String(),
		jen.List(jen.Id("in"), jen.Id("out")).Any(),
		jen.List(jen.Id("refIn"), jen.Id("refOut")).Bool(),
	)
	f.Var().Id("toolRows").Op("=").Index().Id("toolRow").ValuesFunc(func(g *jen.Group) {
		for _, t := range pkg.Tools {
			g.Line().Values(jen.Lit(t.Name), nilOf(gocode.ArgsType(t)), nilOf(gocode.TypeCode(t.Result)), jen.Lit(t.RecursiveInput), jen.Lit(t.RecursiveOutput))
		}
		g.Line()
	})
	f.Comment("formRows are the forms handlers ask a person to fill: a key and a nil pointer to each type.")
	f.Var().Id("formRows").Op("=").Index().Struct(jen.Id("key").String(), jen.Id("typ").Any()).ValuesFunc(func(g *jen.Group) {
		for _, form := range pkg.Forms {
			g.Line().Values(jen.Lit(model.FormKey(form)), nilOf(gocode.TypeCode(form.Type)))
		}
		g.Line()
	})
	enumValues(f, pkg.Enums)
	f.Comment("docComments are the doc comments of the handler package's types and fields.")
	f.Var().Id("docComments").Op("=").Map(jen.String()).String().Values(comments)
	schemaPair := jen.Index(jen.Lit(2)).Op("*").Qual(reflectorPkg, "Schema")
	f.Comment("Reflect returns the schemas of every tool's input and output, and of every form, by name.")
	f.Func().Id("Reflect").Params().Map(jen.String()).Add(schemaPair).Block(
		jen.Id("r").Op(":=").Op("&").Qual(reflectorPkg, "Reflector").Values(jen.Dict{
			jen.Id("DoNotReference"): jen.True(), // inline every type
			jen.Id("Anonymous"):      jen.True(), // no $id derived from the package path
			jen.Id("CommentMap"):     jen.Id("docComments"),
			jen.Id("LookupComment"):  jen.Id("typeDescription"),
			jen.Id("Mapper"):         jen.Id("enumSchema"),
		}),
		// byRef is r with $defs and $ref, for the sides of tools with a recursive type.
		jen.Id("byRef").Op(":=").Op("*").Id("r"),
		jen.Id("byRef").Dot("DoNotReference").Op("=").False(),
		jen.Id("reflector").Op(":=").Func().Params(jen.Id("ref").Bool()).Op("*").Qual(reflectorPkg, "Reflector").Block(
			jen.If(jen.Id("ref")).Block(jen.Return(jen.Op("&").Id("byRef"))),
			jen.Return(jen.Id("r")),
		),
		jen.Id("out").Op(":=").Make(jen.Map(jen.String()).Add(schemaPair), jen.Len(jen.Id("toolRows"))),
		jen.For(jen.List(jen.Id("_"), jen.Id("t")).Op(":=").Range().Id("toolRows")).Block(
			jen.Id("input").Op(":=").Id("reflectType").Call(jen.Id("reflector").Call(jen.Id("t").Dot("refIn")), jen.Qual("reflect", "TypeOf").Call(jen.Id("t").Dot("in")).Dot("Elem").Call()),
			jen.Id("input").Dot("Description").Op("=").Lit(""), // the tool's description says it
			jen.Id("out").Index(jen.Id("t").Dot("name")).Op("=").Add(schemaPair).Values(
				jen.Id("input"), jen.Id("reflectType").Call(jen.Id("reflector").Call(jen.Id("t").Dot("refOut")), jen.Qual("reflect", "TypeOf").Call(jen.Id("t").Dot("out")).Dot("Elem").Call())),
		),
		jen.For(jen.List(jen.Id("_"), jen.Id("f")).Op(":=").Range().Id("formRows")).Block(
			jen.Id("out").Index(jen.Id("f").Dot("key")).Op("=").Add(schemaPair).Values(
				jen.Id("reflectType").Call(jen.Id("r"), jen.Qual("reflect", "TypeOf").Call(jen.Id("f").Dot("typ")).Dot("Elem").Call()), jen.Nil()),
		),
		jen.Return(jen.Id("out")),
	)
	// typeDescription keeps the Description of a field type's JSONSchema
	// method, which the reflector replaces with the field's (empty) tag.
	f.Comment("typeDescription is a field's description from its type's JSONSchema method, when the field has no doc comment of its own.")
	f.Func().Id("typeDescription").Params(jen.Id("t").Qual("reflect", "Type"), jen.Id("field").String()).String().Block(
		jen.If(jen.Id("field").Op("==").Lit("").Op("||").Id("t").Dot("Kind").Call().Op("!=").Qual("reflect", "Struct")).Block(jen.Return(jen.Lit(""))),
		jen.If(jen.List(jen.Id("_"), jen.Id("ok")).Op(":=").Id("docComments").Index(jen.Id("t").Dot("PkgPath").Call().Op("+").Lit(".").Op("+").Id("t").Dot("Name").Call().Op("+").Lit(".").Op("+").Id("field")), jen.Id("ok")).Block(jen.Return(jen.Lit(""))),
		jen.List(jen.Id("f"), jen.Id("ok")).Op(":=").Id("t").Dot("FieldByName").Call(jen.Id("field")),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Lit(""))),
		jen.If(jen.List(jen.Id("s"), jen.Id("ok")).Op(":=").Qual("reflect", "New").Call(jen.Id("f").Dot("Type")).Dot("Interface").Call().Assert(jen.Interface(jen.Id("JSONSchema").Params().Op("*").Qual(reflectorPkg, "Schema"))), jen.Id("ok")).Block(
			jen.If(jen.Id("sch").Op(":=").Id("s").Dot("JSONSchema").Call(), jen.Id("sch").Op("!=").Nil()).Block(jen.Return(jen.Id("sch").Dot("Description"))),
		),
		jen.Return(jen.Lit("")),
	)
	enumHelpers(f, pkg.TextTypes)
	openHelpers(f, pkg.Module)
	// reflectType is a top-level function, not a closure in main: a closure
	// called twice per tool makes the compiler's inliner re-walk all of main
	// for each call, quadratic in the number of tools.
	f.Func().Id("reflectType").Params(jen.Id("r").Op("*").Qual(reflectorPkg, "Reflector"), jen.Id("t").Qual("reflect", "Type")).Op("*").Qual(reflectorPkg, "Schema").Block(
		jen.Id("s").Op(":=").Id("r").Dot("ReflectFromType").Call(jen.Id("t")),
		jen.Id("s").Dot("Version").Op("=").Lit(""), // the runtime compiles as 2020-12; keelgen declares it where $defs are
		jen.Id("applyEnums").Call(jen.Id("s")),
		jen.For(jen.List(jen.Id("_"), jen.Id("d")).Op(":=").Range().Id("s").Dot("Definitions")).Block(jen.Id("applyEnums").Call(jen.Id("d"))),
		jen.Return(jen.Id("s")),
	)
}

// DurationPattern is the schema of a time.Duration: a string in Go's
// duration syntax ("2s", "150ms", "1h30m"), never an unlabelled count of
// nanoseconds a model would guess the unit of.
const DurationPattern = `^[-+]?((([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+|0)$`

const durationTitle = "A duration, such as 2s, 150ms or 1h30m."

// textForms give well-known text types the format keel checks, or a title
// that says what the string holds where no format does.
var textForms = map[string][2]string{
	"github.com/google/uuid.UUID": {"uuid", ""},
	"net/netip.Addr":              {"", "An IPv4 or IPv6 address."},
	"net/netip.Prefix":            {"", "An IP address prefix in CIDR notation, such as 10.0.0.0/8."},
	"net/netip.AddrPort":          {"", "An IP address and port, such as 192.0.2.1:443."},
}

// enumMark marks, in the program, a schema the enum mapper made: once the
// reflector has applied the field's tags, the constants become its enum
// unless an enum= tag already gave one.
const enumMark = "x-keel-enum-of-constants"

// nullMark marks, in the program, the schema of a wire.Nullable's value:
// keelgen then adds null to its type (and to its enum, if it has one),
// which the reflector's Schema, one type, cannot say.
const nullMark = "x-keel-nullable"

// nullForms gives each schema the program marked with nullMark its null:
// in its type, and in its enum or const (which becomes an enum).
func nullForms(doc []byte) ([]byte, error) {
	if !bytes.Contains(doc, []byte(nullMark)) {
		return doc, nil
	}
	s, err := schemamodel.Parse(doc)
	if err != nil {
		return nil, err
	}
	s.Walk(func(sub *schemamodel.Schema, _ jsontext.Pointer) {
		if _, marked := sub.OtherValue(nullMark); !marked {
			return
		}
		sub.Delete(nullMark)
		sub.Type = append(sub.Type, "null")
		if sub.Const != nil { // a const and null: an enum of the two
			sub.Enum, sub.Const = []any{*sub.Const}, nil
		}
		if sub.Enum != nil {
			sub.Enum = append(sub.Enum, nil)
		}
	})
	return s.MarshalJSON()
}

// enumValues writes the module's enum types and their constants' values.
func enumValues(f *jen.File, enums []model.Enum) {
	values := jen.Dict{}
	for _, e := range enums {
		var lits []jen.Code
		for _, v := range e.Values {
			if v.Kind() == constant.String {
				lits = append(lits, jen.Lit(constant.StringVal(v)))
			} else {
				lits = append(lits, jen.Op(v.ExactString()))
			}
		}
		values[jen.Qual("reflect", "TypeFor").Types(gocode.TypeCode(e.Type)).Call()] = jen.Values(lits...)
	}
	f.Comment("enumConstants are the module's named types whose package declares constants of that type, with their values.")
	f.Var().Id("enumConstants").Op("=").Map(jen.Qual("reflect", "Type")).Index().Any().Values(values)
}

// enumHelpers writes the reflector's Mapper for enum types and the pass
// that turns its marks into enums.
func enumHelpers(f *jen.File, declared model.TextTypes) {
	schema := jen.Op("*").Qual(reflectorPkg, "Schema")
	implements := func(iface jen.Code) jen.Code {
		return jen.Id("p").Dot("Implements").Call(jen.Qual("reflect", "TypeFor").Types(iface).Call())
	}
	f.Comment("textForms are the formats and titles of well-known text types.")
	f.Var().Id("textForms").Op("=").Map(jen.String()).Index(jen.Lit(2)).String().Values(jen.DictFunc(func(d jen.Dict) {
		for name, form := range textForms {
			d[jen.Lit(name)] = jen.Values(jen.Lit(form[0]), jen.Lit(form[1]))
		}
	}))
	f.Comment("declaredTexts are the //keel:text types, JSON strings whatever their JSON methods: format and pattern.")
	f.Var().Id("declaredTexts").Op("=").Map(jen.String()).Index(jen.Lit(2)).String().Values(jen.DictFunc(func(d jen.Dict) {
		for name, t := range declared {
			d[jen.Lit(name)] = jen.Values(jen.Lit(t.Format), jen.Lit(t.Pattern))
		}
	}))
	f.Comment("enumSchema is the schema of an enum type, marked with its values, or of a")
	f.Comment("type with a text form of its own (MarshalText, UnmarshalText, no JSON methods): a string.")
	f.Func().Id("enumSchema").Params(jen.Id("t").Qual("reflect", "Type")).Add(schema).Block(
		jen.If(jen.Id("t").Dot("PkgPath").Call().Op("==").Lit(model.NullablePath).Op("&&").Qual("strings", "HasPrefix").Call(jen.Id("t").Dot("Name").Call(), jen.Lit("Nullable["))).Block(
			jen.Return(jen.Id("nullableSchema").Call(jen.Id("t").Dot("Field").Call(jen.Lit(0)).Dot("Type"))),
		),
		jen.If(jen.Id("t").Op("==").Qual("reflect", "TypeFor").Types(jen.Qual("time", "Duration")).Call()).Block(
			jen.Return(jen.Op("&").Qual(reflectorPkg, "Schema").Values(jen.Dict{
				jen.Id("Type"): jen.Lit("string"), jen.Id("Pattern"): jen.Lit(DurationPattern), jen.Id("Title"): jen.Lit(durationTitle),
			})),
		),
		jen.If(jen.List(jen.Id("form"), jen.Id("ok")).Op(":=").Id("declaredTexts").Index(jen.Id("t").Dot("PkgPath").Call().Op("+").Lit(".").Op("+").Id("t").Dot("Name").Call()), jen.Id("ok")).Block(
			jen.Return(jen.Op("&").Qual(reflectorPkg, "Schema").Values(jen.Dict{
				jen.Id("Type"): jen.Lit("string"), jen.Id("Format"): jen.Id("form").Index(jen.Lit(0)), jen.Id("Pattern"): jen.Id("form").Index(jen.Lit(1)),
			})),
		),
		jen.Id("p").Op(":=").Qual("reflect", "PointerTo").Call(jen.Id("t")),
		jen.If(
			jen.Add(implements(jen.Qual("encoding", "TextMarshaler"))).Op("&&").Add(implements(jen.Qual("encoding", "TextUnmarshaler"))).
				Op("&&").Op("!").Add(implements(jen.Qual("encoding/json", "Marshaler"))).Op("&&").Op("!").Add(implements(jen.Qual("encoding/json", "Unmarshaler"))),
		).Block(
			jen.If(jen.List(jen.Id("_"), jen.Id("own")).Op(":=").Id("p").Dot("MethodByName").Call(jen.Lit("JSONSchema")), jen.Op("!").Id("own")).Block(
				jen.Id("form").Op(":=").Id("textForms").Index(jen.Id("t").Dot("PkgPath").Call().Op("+").Lit(".").Op("+").Id("t").Dot("Name").Call()),
				jen.Return(jen.Op("&").Qual(reflectorPkg, "Schema").Values(jen.Dict{
					jen.Id("Type"): jen.Lit("string"), jen.Id("Format"): jen.Id("form").Index(jen.Lit(0)), jen.Id("Title"): jen.Id("form").Index(jen.Lit(1)),
				})),
			),
		),
		// A library's type with its own MarshalJSON (and no text form, no
		// JSONSchema method) in a result is an open value: written by its
		// method, its shape its own (keelgen refuses it in arguments).
		jen.If(jen.Id("libraryMarshaler").Call(jen.Id("t"), jen.Id("p"))).Block(jen.Return(jen.Op("&").Qual(reflectorPkg, "Schema").Values())),
		jen.List(jen.Id("values"), jen.Id("ok")).Op(":=").Id("enumConstants").Index(jen.Id("t")),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Nil())),
		jen.Id("typ").Op(":=").Lit("integer"),
		jen.If(jen.Id("t").Dot("Kind").Call().Op("==").Qual("reflect", "String")).Block(jen.Id("typ").Op("=").Lit("string")),
		jen.Return(jen.Op("&").Qual(reflectorPkg, "Schema").Values(jen.Dict{
			jen.Id("Type"):   jen.Id("typ"),
			jen.Id("Extras"): jen.Map(jen.String()).Any().Values(jen.Dict{jen.Lit(enumMark): jen.Id("values")}),
		})),
	)
	f.Comment("applyEnums gives each marked schema its constants as enum, unless a tag gave one.")
	f.Func().Id("applyEnums").Params(jen.Id("s").Add(schema)).Block(
		jen.If(jen.Id("s").Op("==").Nil()).Block(jen.Return()),
		jen.If(jen.List(jen.Id("v"), jen.Id("ok")).Op(":=").Id("s").Dot("Extras").Index(jen.Lit(enumMark)), jen.Id("ok")).Block(
			jen.Delete(jen.Id("s").Dot("Extras"), jen.Lit(enumMark)),
			jen.If(jen.Len(jen.Id("s").Dot("Extras")).Op("==").Lit(0)).Block(jen.Id("s").Dot("Extras").Op("=").Nil()),
			jen.If(jen.Len(jen.Id("s").Dot("Enum")).Op("==").Lit(0)).Block(jen.Id("s").Dot("Enum").Op("=").Id("v").Assert(jen.Index().Any())),
		),
		// Oldest and Next, not FromOldest: invopop v0.13's ordered map
		// (wk8) has only these, and Genkit's dependencies need v0.13.
		jen.If(jen.Id("s").Dot("Properties").Op("!=").Nil()).Block(
			jen.For(jen.Id("p").Op(":=").Id("s").Dot("Properties").Dot("Oldest").Call(), jen.Id("p").Op("!=").Nil(), jen.Id("p").Op("=").Id("p").Dot("Next").Call()).Block(jen.Id("applyEnums").Call(jen.Id("p").Dot("Value"))),
		),
		jen.For(jen.List(jen.Id("_"), jen.Id("sub")).Op(":=").Range().Add(jen.Index().Add(schema)).Values(jen.Id("s").Dot("Items"), jen.Id("s").Dot("AdditionalProperties"), jen.Id("s").Dot("Not"))).Block(jen.Id("applyEnums").Call(jen.Id("sub"))),
		jen.For(jen.List(jen.Id("_"), jen.Id("list")).Op(":=").Range().Index().Index().Add(schema).Values(jen.Id("s").Dot("AllOf"), jen.Id("s").Dot("AnyOf"), jen.Id("s").Dot("OneOf"), jen.Id("s").Dot("PrefixItems"))).Block(
			jen.For(jen.List(jen.Id("_"), jen.Id("sub")).Op(":=").Range().Id("list")).Block(jen.Id("applyEnums").Call(jen.Id("sub"))),
		),
	)
}

// openHelpers writes the Mapper's helpers for a wire.Nullable (its value's
// schema, marked to take null) and for a library's type written by its own
// MarshalJSON (an open schema).
func openHelpers(f *jen.File, module string) {
	schema := jen.Op("*").Qual(reflectorPkg, "Schema")
	implements := func(iface jen.Code) jen.Code {
		return jen.Id("p").Dot("Implements").Call(jen.Qual("reflect", "TypeFor").Types(iface).Call())
	}
	f.Comment("mainModule is the handler's module: a type outside it is a library's.")
	f.Const().Id("mainModule").Op("=").Lit(module)
	f.Comment("libraryMarshaler reports a library's type written by its own MarshalJSON, which the reflector knows nothing of.")
	f.Func().Id("libraryMarshaler").Params(jen.Id("t").Qual("reflect", "Type"), jen.Id("p").Qual("reflect", "Type")).Bool().Block(
		jen.Id("path").Op(":=").Id("t").Dot("PkgPath").Call(),
		jen.If(jen.Id("mainModule").Op("==").Lit("").Op("||").Id("path").Op("==").Lit("").Op("||").Id("path").Op("==").Id("mainModule").Op("||").Qual("strings", "HasPrefix").Call(jen.Id("path"), jen.Id("mainModule").Op("+").Lit("/"))).Block(jen.Return(jen.False())),
		jen.If(jen.Id("t").Op("==").Qual("reflect", "TypeFor").Types(jen.Qual("time", "Time")).Call().Op("||").Id("t").Op("==").Qual("reflect", "TypeFor").Types(jen.Qual("encoding/json", "RawMessage")).Call()).Block(jen.Return(jen.False())),
		jen.List(jen.Id("_"), jen.Id("own")).Op(":=").Id("p").Dot("MethodByName").Call(jen.Lit("JSONSchema")),
		jen.Return(jen.Op("!").Id("own").Op("&&").Add(implements(jen.Qual("encoding/json", "Marshaler")))),
	)
	f.Comment("nullableSchema is a wire.Nullable's schema: its value's, marked to take null (keelgen adds it to type and enum).")
	f.Func().Id("nullableSchema").Params(jen.Id("t").Qual("reflect", "Type")).Add(schema).Block(
		jen.Id("s").Op(":=").Id("enumSchema").Call(jen.Id("t")),
		jen.List(jen.Id("own"), jen.Id("hasOwn")).Op(":=").Qual("reflect", "New").Call(jen.Id("t")).Dot("Interface").Call().Assert(jen.Interface(jen.Id("JSONSchema").Params().Add(schema))),
		jen.Switch().Block(
			jen.Case(jen.Id("s").Op("!=").Nil()),
			jen.Case(jen.Id("hasOwn")).Block(jen.Id("s").Op("=").Id("own").Dot("JSONSchema").Call()),
			jen.Case(jen.Id("t").Op("==").Qual("reflect", "TypeFor").Types(jen.Qual("time", "Time")).Call()).Block(
				jen.Id("s").Op("=").Op("&").Qual(reflectorPkg, "Schema").Values(jen.Dict{jen.Id("Type"): jen.Lit("string"), jen.Id("Format"): jen.Lit("date-time")}),
			),
			jen.Default().Block(
				jen.Id("s").Op("=").Op("&").Qual(reflectorPkg, "Schema").Values(jen.Dict{jen.Id("Type"): jen.Id("kindTypes").Index(jen.Id("t").Dot("Kind").Call())}),
			),
		),
		jen.If(jen.Id("s").Dot("Extras").Op("==").Nil()).Block(jen.Id("s").Dot("Extras").Op("=").Map(jen.String()).Any().Values()),
		jen.Id("s").Dot("Extras").Index(jen.Lit(nullMark)).Op("=").True(),
		jen.Return(jen.Id("s")),
	)
	f.Comment("kindTypes are the JSON types of Go's basic kinds.")
	f.Var().Id("kindTypes").Op("=").Map(jen.Qual("reflect", "Kind")).String().Values(jen.DictFunc(func(d jen.Dict) {
		d[jen.Qual("reflect", "String")] = jen.Lit("string")
		d[jen.Qual("reflect", "Bool")] = jen.Lit("boolean")
		for _, k := range []string{"Int", "Int8", "Int16", "Int32", "Int64", "Uint", "Uint8", "Uint16", "Uint32", "Uint64"} {
			d[jen.Qual("reflect", k)] = jen.Lit("integer")
		}
		d[jen.Qual("reflect", "Float32")] = jen.Lit("number")
		d[jen.Qual("reflect", "Float64")] = jen.Lit("number")
	}))
}

// programDir is where the program seems to live, inside the handler
// package's directory; the go command ignores names starting with a dot
// for ./... patterns.
const programDir = ".keelgen-schema"

// run runs the program as the package dir/.keelgen-schema, through an
// overlay: the source is a temporary file outside the user's tree, removed
// in every case. It returns the program's standard output. files are the
// program's, by slash path below dir; main is its main package's.
func run(dir string, files map[string][]byte, main string) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "keelgen-schema-")
	if err != nil {
		return nil, fmt.Errorf("schema program: %w", err)
	}
	defer os.RemoveAll(tmp)
	replace := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		file := filepath.Join(tmp, filepath.FromSlash(name)) // named as in the tree, in the go command's messages
		if err == nil {
			err = os.MkdirAll(filepath.Dir(file), 0o755)
		}
		if err == nil {
			err = os.WriteFile(file, files[name], 0o644)
		}
		replace[filepath.Join(dir, filepath.FromSlash(name))] = file
	}
	overlay, merr := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err == nil {
		err = merr
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(tmp, "overlay.json"), overlay, 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("schema program: %w", err)
	}
	// No -trimpath: the program's dependencies are then compiled as the
	// user's own builds compile them, and shared with them in the build
	// cache (keel's tests add it, for their throwaway modules).
	// -ldflags="-s -w": no symbol table or debug information to link for a
	// program run once. -gcflags="-N -l" (for the program's own package
	// only): no optimization or inlining of code run once, which still
	// compiles in 0.16 s against 0.2 s at 1,000 tools (when main called
	// reflect.TypeFor per tool, 0.7 s against 2.8 s).
	cmd := exec.Command("go", "run", "-gcflags=-N -l", "-ldflags=-s -w", "-overlay", filepath.Join(tmp, "overlay.json"), "./"+main)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(strings.ReplaceAll(stderr.String(), tmp+string(filepath.Separator), ""))
		if hint := moduleHint(msg); hint != "" {
			return nil, fmt.Errorf("running the schema program: %v\n%s%s", err, withoutGoAdvice(msg), hint)
		}
		return nil, fmt.Errorf("running the schema program: %v\n%s", err, msg)
	}
	return stdout.Bytes(), nil
}

// moduleHint turns the go command's complaint that the user's module lacks
// the reflector (or its go.sum lines) into the one command that fixes it:
// go get of the version keelgen itself was built with. The go command's own
// advice in that case ("go mod tidy") changes nothing when nothing the
// module builds imports the reflector.
func moduleHint(msg string) string {
	if strings.Contains(msg, reflectorTooOld) {
		return ""
	}
	if !strings.Contains(msg, reflectorPkg) && !strings.Contains(msg, "updates to go.mod needed") {
		return ""
	}
	return fmt.Sprintf("\nkeelgen: the module must require %s (and its go.sum lines); run:\n\tgo get %s@%s", reflectorPkg, reflectorPkg, reflectorVersion())
}

// withoutGoAdvice is the go command's complaint about a missing module
// with its own advice cut (keelgen's hint replaces it, so one command is
// printed, once) and keelgen's program named as itself: the go command
// names the program's file as the importer, which is not the user's.
func withoutGoAdvice(msg string) string {
	var out []string
	for _, line := range strings.Split(msg, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "go get ") || strings.HasPrefix(strings.TrimSpace(line), "go mod tidy") {
			continue
		}
		line, _, _ = strings.Cut(line, "; to add it:")
		line, _, _ = strings.Cut(line, "; to update it:")
		if rest, ok := strings.CutPrefix(line, programDir+"/"); ok {
			if _, after, ok := strings.Cut(rest, ": "); ok {
				line = "keelgen's schema program: " + after
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// reflectorTooOld is what the program says when the module builds a
// reflector that makes omitzero fields required.
const reflectorTooOld = "keelgen needs " + reflectorPkg + " v0.14.0 or later, which leaves omitzero fields optional; " +
	"this module builds an older one (is there a replace in go.mod?). Run keelgen in a module that selects v0.14.0 or later."

// reflectorVersion is the version of the reflector keelgen was built with.
func reflectorVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == reflectorPkg {
				if d.Replace != nil {
					d = d.Replace
				}
				return d.Version
			}
		}
	}
	return "latest"
}
