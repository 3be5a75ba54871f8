package render

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// structOf is a struct type of the given fields, each "Name type `tag`".
func structOf(fields ...*types.Var) *types.Struct {
	var tags []string
	for _, f := range fields {
		tags = append(tags, `json:"`+strings.ToLower(f.Name())+`"`)
	}
	return types.NewStruct(fields, tags)
}

func fieldVar(name string, t types.Type) *types.Var {
	return types.NewField(token.NoPos, nil, name, t, false)
}

// A struct's reader plan names each member's presence flag after its field,
// marks an optional member whose null means absent, and plans one reader
// per distinct (type, schema) pair, met in order.
func TestReadStructPlan(t *testing.T) {
	g := planner()
	st := structOf(fieldVar("ID", types.Typ[types.String]), fieldVar("Note", types.NewPointer(types.Typ[types.String])), fieldVar("Tags", types.NewSlice(types.Typ[types.String])))
	n := mustNode(t, `{"type":"object","additionalProperties":false,"required":["id"],"properties":{
		"id":{"type":"string","pattern":"^INC-"},"note":{"type":["string","null"]},"tags":{"type":"array","items":{"type":"string"},"maxItems":3}}}`)
	name := g.reader(st, n, "", "Args")
	if len(g.diags) != 0 {
		t.Fatalf("diagnostics %v", g.diags)
	}
	var names []string
	for _, f := range g.decls {
		names = append(names, f.name)
	}
	if name != "readArgs" || strings.Join(names, " ") != "readArgs readArgsID readStringPointer readString readArgsTags" {
		t.Fatalf("%s, functions %q", name, names)
	}
	f := g.decls[0]
	var got []string
	for _, m := range f.members {
		got = append(got, m.json+":"+m.flag+":"+m.fn+":"+strconv.FormatBool(m.required)+":"+strconv.FormatBool(m.nullAbsent))
	}
	want := "id:ID:readArgsID:true:false note:Note:readStringPointer:false:false tags:Tags:readArgsTags:false:true"
	if strings.Join(got, " ") != want {
		t.Errorf("members %q\nwant      %q", strings.Join(got, " "), want)
	}
	if tags := g.decls[4]; tags.kind != kSlice || tags.elem != "readString" || show(tags.counts) != "maxItems >3" {
		t.Errorf("tags: %+v", tags)
	}
	if len(g.patterns) != 1 || g.patterns[0].re != "^INC-" {
		t.Errorf("patterns %v", g.patterns)
	}
}

// A mismatch between the Go type and the schema is found while planning,
// and no function is printed for it.
func TestPlanRefusesWhatCodeCannotCheck(t *testing.T) {
	g := planner()
	st := structOf(fieldVar("N", types.Typ[types.Int]))
	g.reader(st, mustNode(t, `{"type":"object","additionalProperties":false,"properties":{"n":{"type":"string"}}}`), "", "Args")
	if len(g.diags) != 1 || !strings.Contains(g.diags[0].Message, "type string does not describe Go type int") {
		t.Errorf("diagnostics %v", g.diags)
	}
}

// omitempty and omitzero are planned as tests the printer spells.
func TestWriteMemberTests(t *testing.T) {
	for _, c := range []struct {
		t     types.Type
		empty emptyTest
		zero  zeroTest
	}{
		{types.Typ[types.String], emptyString, zeroString},
		{types.NewSlice(types.Typ[types.Int]), emptyLen, zeroNil},
		{types.NewPointer(types.Typ[types.String]), emptyPtrString, zeroNil},
		{types.NewPointer(types.Typ[types.Int]), emptyPointer, zeroNil},
		{types.Typ[types.Bool], emptyUnknown, zeroBool},
		{types.Typ[types.Float64], emptyUnknown, zeroNumber},
		{structOf(fieldVar("A", types.Typ[types.Int])), emptyUnknown, zeroComposite},
	} {
		g := planner()
		zero, _ := g.zeroTest(c.t, "/x")
		if e := emptyTestOf(c.t); e != c.empty || zero != c.zero {
			t.Errorf("%s: empty %d zero %d, want %d %d", c.t, e, zero, c.empty, c.zero)
		}
	}
	g := planner()
	g.zeroTest(structOf(fieldVar("F", types.NewSlice(types.Typ[types.Int]))), "/x")
	if len(g.diags) != 1 {
		t.Errorf("omitzero on an incomparable struct: %v", g.diags)
	}
}

// The printers cannot fail and ask go/types nothing: no emit file imports
// go/types or reaches the planner's state.
func TestEmittersAreOnlyPrinters(t *testing.T) {
	files, _ := filepath.Glob("*emit*.go")
	var printers int
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		printers++
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "go/types" {
				t.Errorf("%s imports go/types", file)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Name == "codecs" {
				t.Errorf("%s: %s uses the planner's state", file, id.Name)
			}
			return true
		})
	}
	if printers < 4 {
		t.Fatalf("%d printers found: %v", printers, files)
	}
	noTypesReachPrinters(t)
}

// noTypesReachPrinters type-checks this package and fails on any
// expression of a printer (an *emit*.go file) whose value is a go/types
// type: the plan spells every Go type for the file (jen.Code) before
// printing starts, so a printer reads none through the model either.
func noTypesReachPrinters(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports}, ".")
	if err != nil || len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("loading the package: %v %v", err, pkgs)
	}
	p := pkgs[0]
	goTypes := p.Imports["go/types"]
	if goTypes == nil {
		t.Fatal("the planner no longer imports go/types: this check checks nothing")
	}
	typeIface := goTypes.Types.Scope().Lookup("Type").Type().Underlying().(*types.Interface)
	seen := 0
	for expr, tv := range p.TypesInfo.Types {
		file := filepath.Base(p.Fset.Position(expr.Pos()).Filename)
		if !strings.Contains(file, "emit") || strings.HasSuffix(file, "_test.go") || tv.Type == nil || tv.IsType() {
			continue
		}
		seen++
		if types.Implements(tv.Type, typeIface) || types.Implements(types.NewPointer(tv.Type), typeIface) {
			t.Errorf("%s: a printer reads a go/types value (%s)", p.Fset.Position(expr.Pos()), tv.Type)
		}
	}
	if seen < 100 {
		t.Fatalf("only %d expressions of the printers were checked", seen)
	}
}

// A keyword generated code checks, but whose value it cannot read (a
// number written as a string, a tuple), is a diagnostic; none is skipped.
func TestUnreadableValuesAreDiagnosed(t *testing.T) {
	for doc, want := range map[string]string{
		`{"type":"string","minLength":"3"}`:              `keyword "minLength" has a value generated code cannot check ("3")`,
		`{"type":"string","pattern":""}`:                 `keyword "pattern" has a value generated code cannot check ("")`,
		`{"type":"array","items":[{"type":"string"}]}`:   `items as a list (tuple) cannot be checked by generated code`,
		`{"type":"integer","enum":3}`:                    `keyword "enum" has a value generated code cannot check (3)`,
		`{"type":"string","if":{"const":"a"},"then":{}}`: `keyword "if" cannot be checked by generated code`,
	} {
		g := planner()
		typ := types.Type(types.Typ[types.String])
		switch {
		case strings.Contains(doc, `"array"`):
			typ = types.NewSlice(types.Typ[types.String])
		case strings.Contains(doc, `"integer"`):
			typ = types.Typ[types.Int]
		}
		g.reader(typ, mustNode(t, doc), "", "X")
		var msgs []string
		for _, d := range g.diags {
			msgs = append(msgs, d.Message)
		}
		if len(msgs) != 1 && !strings.Contains(doc, `"if"`) || !strings.Contains(strings.Join(msgs, "\n"), want) {
			t.Errorf("%s: diagnostics %q, want one with %q", doc, msgs, want)
		}
	}
}
