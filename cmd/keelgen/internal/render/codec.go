package render

import (
	"encoding/json"
	"fmt"
	"go/token"
	"go/types"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/cmd/keelgen/internal/gocode"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/schemamodel"
	"github.com/keelgen/keel/runtime/wire"
)

const (
	wirePkg = "github.com/keelgen/keel/runtime/wire"
	askPkg  = "github.com/keelgen/keel/runtime/ask"
)

// codecs is the planner of keel_codecs.go (plan.go) for one side of one
// tool: the reader that fills the handler's argument value from the model's
// JSON in one pass, or the writer that checks and encodes the result, and
// one reader or writer function per distinct (type, schema) pair, gathered
// in the shared codecState. It is made for its side and not changed after;
// a field's value is planned by a copy whose diagnostics point at the field
// (atField). A keyword it cannot check is a diagnostic, never skipped. The
// helpers below are the planner's: kinds, names, fields.
type codecs struct {
	*codecState
	tool *model.Tool
	side string           // "input" or "output", for diagnostics
	defs schemamodel.Defs // the side's $defs, which its $refs resolve to
	at   token.Pos        // the field being read or written, for diagnostics
}

// codecState is what planning keel_codecs.go gathers across every tool and
// side: the functions and the names they took, the patterns, and the
// diagnostics.
type codecState struct {
	pkg   *model.Package
	diags []model.Diagnostic
	warns []model.Diagnostic

	funcs    map[string]string // (direction, type, schema) → function name
	taken    map[string]bool   // function and variable names in use
	decls    []*codecFunc      // functions, in the order a reader meets them
	patterns []patternVar      // the compiled patterns
	patVars  map[string]string // pattern → var name

	headerNodes map[node]bool // the argument schemas that may carry x-mcp-header
}

// node is one schema as the planner reads it: never nil, an empty schema
// standing for true (anything).
type node = *schemamodel.Schema

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// argsType is the type the reader fills: the argument struct, or the one
// keelgen emits for plain parameters.
func argsType(t *model.Tool) types.Type {
	if t.Form == model.StructArgs {
		return t.Args
	}
	return emittedArgs{t}
}

// emittedArgs is the argument struct keelgen emits for a tool with plain
// parameters, a type of the output package that keel_tools.go declares:
// its fields are the parameters. It is a types.Type of its own, so no nil
// stands for it; the planner asks go/types nothing about it.
type emittedArgs struct{ tool *model.Tool }

func (e emittedArgs) Underlying() types.Type { return e }
func (e emittedArgs) String() string         { return e.tool.ArgsTypeName() }

// handlerType is the handler as its binder takes it: with the argument
// struct, whichever form the tool has (keel_tools.go adapts plain
// parameters).
func handlerType(t *model.Tool) jen.Code {
	return jen.Func().Params(jen.Qual("context", "Context"), gocode.ArgsType(t)).Params(gocode.TypeCode(t.ResultType()), jen.Error())
}

func parseNode(doc []byte) (node, error) {
	s, err := schemamodel.Parse(doc)
	if err != nil {
		return nil, err
	}
	return asNode(s), nil
}

// node reads a subschema, a $ref as the schema of $defs it refers to.
func (g *codecs) node(s *schemamodel.Schema) node {
	n := asNode(s)
	if resolved, ok := g.defs.Resolve(n); ok {
		return resolved
	}
	return n
}

// asNode reads a subschema: absent or true is the empty schema; false
// stays a schema that refuses everything (not {}), which no generated
// code checks.
func asNode(s *schemamodel.Schema) node {
	switch {
	case s == nil || s.IsTrue():
		return &schemamodel.Schema{}
	case s.IsFalse():
		return &schemamodel.Schema{Not: &schemamodel.Schema{}}
	}
	return s
}

// fail reports what generated code cannot check: a diagnostic, and no files.
func (g *codecs) fail(ptr, format string, args ...any) {
	g.diags = append(g.diags, g.diagnostic("", ptr, format, args...))
}

// warn reports what generated code can check but will likely refuse.
func (g *codecs) warn(ptr, format string, args ...any) {
	g.warns = append(g.warns, g.diagnostic("warning: ", ptr, format, args...))
}

func (g *codecs) diagnostic(prefix, ptr, format string, args ...any) model.Diagnostic {
	if ptr == "" {
		ptr = "/"
	}
	pos := g.tool.Pos
	if g.at.IsValid() && g.pkg.Fset != nil {
		pos = g.pkg.Fset.Position(g.at)
	}
	return model.Diagnostic{Pos: pos,
		Message: fmt.Sprintf("%s%s: %s schema at %s: %s", prefix, g.tool.Name, g.side, ptr, fmt.Sprintf(format, args...))}
}

// zeroBreaks names the keyword that a zero number or false breaks, or "".
func zeroBreaks(n node, k kind) string {
	zero := json.Number("0")
	if k == kBool {
		if e := enumValues(n); e != nil && !slices.Contains(e.values, any(false)) {
			return e.keyword
		}
		return ""
	}
	r := func(key string) (int, bool) {
		v, ok := num(n, key)
		if !ok {
			return 0, false
		}
		return rat(v).Sign(), true
	}
	if s, ok := r("minimum"); ok && s > 0 {
		return "minimum"
	}
	if s, ok := r("exclusiveMinimum"); ok && s >= 0 {
		return "exclusiveMinimum"
	}
	if s, ok := r("maximum"); ok && s < 0 {
		return "maximum"
	}
	if s, ok := r("exclusiveMaximum"); ok && s <= 0 {
		return "exclusiveMaximum"
	}
	if e := enumValues(n); e != nil && !slices.ContainsFunc(e.values, func(v any) bool {
		nv, ok := v.(json.Number)
		return ok && rat(nv) != nil && rat(nv).Cmp(rat(zero)) == 0
	}) {
		return e.keyword
	}
	return ""
}

// kindOf classifies t and reports every way n does not describe it; false
// when no reader or writer can be made.
func (g *codecs) kindOf(t types.Type, n node, ptr string) (kind, bool) {
	k := kStruct
	if _, emitted := t.(emittedArgs); !emitted {
		var why string
		switch k, why = classify(t, g.pkg.TextTypes); {
		case k == kUnsupported && g.libraryMarshaler(t):
			k = kMarshaler
		case k == kUnsupported:
			g.fail(ptr, "%s", why)
			return k, false
		}
		if n, named := types.Unalias(t).(*types.Named); named && k == kStruct && g.pkg.IsTuple(n) {
			k = kTuple
		}
		if k == kStruct && isUnion(g.pkg, t) {
			k = kUnion
		}
	}
	holder := k == kPointer || k == kNullable // its keywords are its value's
	if n.Has("prefixItems") && k != kTuple && !holder {
		g.fail(ptr, "keyword \"prefixItems\" is checked by generated code only as a //keel:tuple struct's items")
	}
	g.checkKeywords(n, ptr)
	for _, kw := range n.Keywords() {
		if on := schemamodel.RuleOf(kw).On; len(on) > 0 && !holder && !slices.Contains(on, jsonTypeOf[k]) {
			g.fail(ptr, "keyword %q is checked by generated code on a %s only", kw, strings.Join(on, " or "))
		}
	}
	if (k != kStruct && !holder && k != kUnion) || (k == kStruct && g.side != "input") {
		for _, kw := range []string{"oneOf", "anyOf", "dependentRequired"} {
			if n.Has(kw) {
				g.fail(ptr, "keyword %q is checked by generated code only on a struct of a tool's arguments, naming its members (oneof_required= and anyof_required= tags, dependentRequired from a JSONSchemaExtend method)", kw)
			}
		}
	}
	if k != kDuration && k != kText && !holder {
		g.textBounds(n, k, ptr) // each one a diagnostic here
	}
	g.checkEnumKinds(n, k, ptr)
	if !holder && k != kSlice && k != kMap && k != kAny && k != kMarshaler && k != kUnion {
		g.checkType(n, k, t, ptr)
		if n.Type.Has("null") {
			g.fail(ptr, "the schema allows null, which Go type %s cannot hold; make it a pointer, or a wire.Nullable where null is not absent", types.TypeString(t, qualifier))
		}
	}
	return k, true
}

// checkKeywords reports every keyword of n that generated code does not
// check, and every one it checks whose value it cannot read (keelgen's
// metaschema check refuses such a value first; the planner does not rely
// on it).
func (g *codecs) checkKeywords(n node, ptr string) {
	for _, k := range slices.Sorted(slices.Values(n.Keywords())) {
		switch raw, unread := n.OtherValue(k); {
		case k == "$defs" || k == "$schema": // read through $ref; the dialect, which keel's is
		case k == mcpHeader: // the MCP server's to check; checkHeaders read it
			if g.side != "input" || !g.headerNodes[n] {
				g.fail(ptr, "x-mcp-header is only for a property of the arguments that a client reaches from their root through properties")
			}
		case k == schemamodel.Untrusted: // the executor's to read: it marks text the model must not obey
			if g.side != "output" || !schemamodel.IsUntrusted(n) || !n.Type.Has("string") {
				g.fail(ptr, "x-keel-untrusted=true marks a text member of a tool's result (came from outside: a page, an email), nothing else")
			}
		case !schemamodel.RuleOf(k).Checked && !schemamodel.IsAnnotation(k):
			g.fail(ptr, "keyword %q cannot be checked by generated code; describe the value with the keywords keel checks (see the README)", k)
		case schemamodel.RuleOf(k).Checked && unread && !(k == "items" && raw.Kind() == '[') && k != "dependentRequired" && k != "prefixItems" && !slices.Contains(textBoundKeywords, k):
			// (a tuple: itemsNode says so; dependents and textBounds read their own)
			g.fail(ptr, "keyword %q has a value generated code cannot check (%s)", k, raw)
		}
	}
}

// nullable reports whether n's type takes null.
func nullable(n node) bool { return n.Type.Admits("null") }

// checkType reports a schema type that does not describe the Go value.
func (g *codecs) checkType(n node, k kind, t types.Type, ptr string) {
	want := jsonTypeOf[k]
	if n.Type.Admits(want) || (want == "integer" && n.Type.Has("number")) {
		return
	}
	g.fail(ptr, "type %s does not describe Go type %s (a JSON %s)", typeList(n.Type), types.TypeString(t, qualifier), want)
}

func typeList(ts schemamodel.Types) string {
	return strings.Join(slices.Compact(slices.Sorted(slices.Values(ts))), " or ")
}

// key identifies a function: the same type with the same schema (less
// annotations) shares one.
func key(dir string, t types.Type, n node) string {
	ts := "args"
	if _, emitted := t.(emittedArgs); !emitted {
		ts = types.TypeString(t, nil)
	}
	if n.Has("$defs") || n.Has("$schema") { // a root: the same schema as its type's in $defs
		n = n.Clone()
		n.Delete("$defs")
		n.Delete("$schema")
	}
	return dir + "|" + ts + "|" + string(n.Canonical(true))
}

// assertions lists the keywords of n that assert something.
func assertions(n node) []string {
	return slices.DeleteFunc(n.Keywords(), schemamodel.IsAnnotation)
}

// hintFor names a function after its Go type where that names one schema
// wherever the type is used (a type with its own JSONSchema method, a
// struct, a type whose schema here says no more than its type, enum and
// shape), else "" and the function is named after where the value sits.
// So a type given other constraints in one place gets a name of that place,
// and another place's use never renames it.
func hintFor(t types.Type, n node) string {
	if _, emitted := t.(emittedArgs); emitted {
		return ""
	}
	if elem, ok := model.NullableElem(t); ok {
		if h := hintFor(elem, withoutNull(n)); h != "" {
			return h + "Nullable"
		}
		return ""
	}
	switch u := types.Unalias(t).(type) {
	case *types.Named:
		if model.HasMethod(u, "JSONSchema") || model.HasMethod(u, "JSONSchemaAlias") || onlyShape(n) {
			if a, alias := t.(*types.Alias); alias && u.Obj().Pkg().Path() == "encoding/json/jsontext" {
				return a.Obj().Name() // json.RawMessage, an alias of jsontext.Value under GOEXPERIMENT=jsonv2: named alike in both
			}
			return u.Obj().Name()
		}
		if _, isStruct := u.Underlying().(*types.Struct); isStruct {
			return u.Obj().Name()
		}
	case *types.Pointer:
		if h := hintFor(u.Elem(), n); h != "" {
			return h + "Pointer"
		}
	case *types.Basic:
		if only := assertions(n); len(only) == 0 || (len(only) == 1 && only[0] == "type") {
			return u.Name()
		}
	case *types.Interface:
		if u.Empty() && len(assertions(n)) == 0 {
			return "Any"
		}
	}
	return ""
}

// onlyShape reports whether n constrains no more than a type, an enum and
// an object's or array's shape.
func onlyShape(n node) bool {
	for _, k := range assertions(n) {
		switch k {
		case "type", "enum", "properties", "required", "additionalProperties", "items":
		default:
			return false
		}
	}
	return true
}

// name reserves the name prefix+hint, else prefix+place when the first is
// another function's (the same type with another schema), else, as a last
// resort that a place name should never need, a numbered one.
func (g *codecs) name(prefix, hint, place string) string {
	title := func(s string) string { return prefix + strings.ToUpper(s[:1]) + s[1:] }
	for _, c := range []string{hint, place} {
		if c != "" && !g.taken[title(c)] {
			g.taken[title(c)] = true
			return title(c)
		}
	}
	return g.unique(title(place))
}

// unique reserves base, or base2, base3, ... when it is taken.
func (g *codecState) unique(base string) string {
	name := base
	for i := 2; g.taken[name]; i++ {
		name = fmt.Sprintf("%s%d", base, i)
	}
	g.taken[name] = true
	return name
}

// fn reserves a function for k, or returns the one already made. build
// fills its body; functions appear in the order they are first met.
func (g *codecs) fn(k, prefix, hint, place string, build func(name string) *codecFunc) string {
	if name, ok := g.funcs[k]; ok {
		return name
	}
	name := g.name(prefix, hint, place)
	g.funcs[k] = name
	i := len(g.decls)
	g.decls = append(g.decls, nil)
	g.decls[i] = build(name)
	return name
}

func errReturn() jen.Code {
	return jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
}

// ifErr is `if err := call; err != nil { return err }`.
func ifErr(call jen.Code) jen.Code {
	return jen.If(jen.Err().Op(":=").Add(call), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
}

func failIf(cond jen.Code, keyword string) jen.Code {
	return jen.If(cond).Block(jen.Return(jen.Qual(wirePkg, "Fail").Call(jen.Lit(keyword))))
}

// pattern returns the var holding re, compiled once.
func (g *codecs) pattern(re, hint string) string {
	if v, ok := g.patVars[re]; ok {
		return v
	}
	v := g.name("pattern", "", hint)
	g.patVars[re] = v
	g.patterns = append(g.patterns, patternVar{v, re})
	return v
}

// num is a schema number keyword, exactly as written.
func num(n node, k string) (json.Number, bool) {
	v := n.Number(k)
	return json.Number(v), v != ""
}

func rat(v json.Number) *big.Rat {
	r, _ := new(big.Rat).SetString(string(v))
	return r
}

func knownFormats() []string {
	return slices.DeleteFunc(wire.Formats(), func(f string) bool { return !wire.HasFormat(f) })
}

func intOf(v json.Number) int {
	r := rat(v)
	if r == nil || !r.IsInt() || !r.Num().IsInt64() {
		return math.MaxInt32
	}
	return int(r.Num().Int64())
}

type enum struct {
	keyword string
	values  []any
}

// enumValues reads enum or const; both are checked the same way.
func enumValues(n node) *enum {
	if n.Const != nil {
		if n.Enum != nil {
			return &enum{"enum", nil} // both: handled by the caller's diagnostic
		}
		return &enum{"const", []any{*n.Const}}
	}
	if n.Enum != nil {
		return &enum{"enum", n.Enum}
	}
	return nil
}

// checkEnumKinds refuses enum or const on values generated code does not
// compare (objects and arrays), and both at once.
func (g *codecs) checkEnumKinds(n node, k kind, ptr string) {
	hasEnum, hasConst := n.Has("enum"), n.Has("const")
	if hasEnum && hasConst {
		g.fail(ptr, "enum and const together cannot be checked by generated code")
	}
	if (hasEnum || hasConst) && (k == kSlice || k == kArray || k == kMap || k == kStruct || k == kRaw || k == kTime) {
		g.fail(ptr, "enum or const on %s values cannot be checked by generated code", jsonTypeOf[k])
	}
}

func intLit(b *big.Int) jen.Code { return jen.Op(b.String()) }

func intRange(t types.Type, k kind) (lo, hi *big.Int) {
	n := uint(bits(t))
	if k == kUint {
		return big.NewInt(0), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), n), big.NewInt(1))
	}
	hi = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), n-1), big.NewInt(1))
	return new(big.Int).Neg(new(big.Int).Add(hi, big.NewInt(1))), hi
}

// floor: big.Int's division is Euclidean, and the denominator is positive.
func floor(r *big.Rat) *big.Int { return new(big.Int).Div(r.Num(), r.Denom()) }

func ceil(r *big.Rat) *big.Int {
	q := floor(r)
	if !r.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// itemsNode and valuesNode are the subschemas of an array's items and a
// map's values.
func (g *codecs) itemsNode(n node, ptr string) node {
	if raw, ok := n.OtherValue("items"); ok && raw.Kind() == '[' {
		g.fail(ptr, "items as a list (tuple) cannot be checked by generated code")
	}
	return g.node(n.Items)
}

func (g *codecs) valuesNode(n node, ptr string) node {
	if n.AdditionalProperties.IsFalse() {
		g.fail(ptr, "a map whose schema allows no member cannot be checked by generated code; use a struct")
	}
	return g.node(n.AdditionalProperties)
}
