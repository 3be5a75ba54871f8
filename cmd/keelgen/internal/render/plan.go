package render

import (
	"fmt"
	"go/types"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/cmd/keelgen/internal/gocode"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/schemamodel"
)

// keel_codecs.go is planned, then printed. Planning (plan.go, plan_read.go,
// plan_write.go, checks.go) asks go/types every question, names every
// function and var, and raises every diagnostic; printing (emit.go,
// emit_read.go, emit_write.go, checks_emit.go) turns the plan into Go and
// cannot fail. Go types reach the plan already spelled for the output
// package (jen.Code).

// codecPlan is keel_codecs.go before a line of it is printed.
type codecPlan struct {
	shapes   []shapeCheck
	calls    []callPlan
	forms    []formPlan
	funcs    []*codecFunc // readers and writers, in the order a reader meets them
	patterns []patternVar // compiled once, in the order the checks meet them
	binders  map[string]string
	warnings []model.Diagnostic
}

// shapeCheck is one struct type's compile-time check: a conversion to it
// from its struct type spelled without tags or, when an unexported field
// makes that impossible, a keyed literal of its exported fields.
type shapeCheck struct {
	typ    jen.Code // the named struct type
	exact  jen.Code // its fields as a struct type literal; nil when it cannot be spelled
	fields []shapeField
}

type shapeField struct {
	name string
	typ  jen.Code
}

// callPlan is the handler type of the tools that share one reader and one
// writer, and the type of their calls.
type callPlan struct {
	handler, call, read, write string
	writeArgs                  string // the writer of the checked arguments, as the policy reads them
	handlerType, args, result  jen.Code
	content                    bool // the result is a runtime.WithContent: write its Data, hand on its Content
	text                       bool // the result has MCPText: hand on its text
}

type patternVar struct{ name, re string }

// formPlan is one form a handler asks a person to fill: its type, the
// schema the client shows, and the reader of the answer.
type formPlan struct {
	typ    jen.Code
	schema string
	read   string
}

// codecFunc is one reader or writer: of one Go type, against one schema.
type codecFunc struct {
	name  string
	write bool
	typ   jen.Code // the Go type it reads or writes
	kind  kind
	null  bool // reading: null reads as nil (a pointer, slice or map); writing: a nil pointer writes null (else it is refused)

	// leaf values
	checks []check
	conv   jen.Code // the type a decoded value converts to; nil when it is one already
	plain  bool     // writing: *v is the encoder's own type, no conversion
	bits   int      // an integer's or a float's size
	intLen bool     // int or uint: strconv.IntSize
	bound  string   // reading text for a parser keel does not own: the wire constant bounding its bytes; "" when maxLength does
	parse  string   // reading a text type: the wire function that parses it; "" for its UnmarshalText

	// pointers, slices and maps
	elem     string   // the element's (the pointee's, a value's) function
	elemType jen.Code // the element's Go type
	keyConv  jen.Code // a map key's type, when a string converts to it
	counts   []check
	unique   []check

	// structs
	members      []memberPlan
	alternatives []alternativesPlan // reading: oneOf and anyOf of required sets
	dependents   []dependentPlan    // reading: dependentRequired
	nested       bool               // writing a type that contains itself: a level counted, so a cycle stops
}

// alternativesPlan is a struct's oneOf (exactly one set given) or anyOf
// (at least one): each set the presence flags of its required members.
type alternativesPlan struct {
	keyword string
	sets    [][]string
}

// dependentPlan is one member of a struct's dependentRequired: when it is
// given (its presence flag), so must the members it needs be.
type dependentPlan struct {
	flag  string
	needs []string
}

// memberPlan is one JSON member of a struct.
type memberPlan struct {
	json     string
	access   []string // selectors from the struct value
	fn       string   // the member value's reader or writer
	elemType jen.Code // a union's alternative: the Go type its pointer field points to
	required bool

	flag       string // reading: its presence flag
	given      bool   // reading: an alternative names it, so given.flag records it present and not null
	nullAbsent bool   // reading: an optional member whose null means absent

	omitEmpty, omitZero bool
	empty               emptyTest // writing omitempty: what json v2 omits without writing
	zero                zeroTest  // writing omitzero: how the zero value is told
	zeroType            jen.Code  // zeroComposite: the type whose zero value is compared
}

// emptyTest is how an omitempty member's value is known, before writing,
// not to be one json v2 omits.
type emptyTest int

const (
	emptyUnknown   emptyTest = iota // only writing tells
	emptyString                     // != ""
	emptyLen                        // len > 0
	emptyPointer                    // != nil
	emptyPtrString                  // != nil && *v != ""
)

// zeroTest is how an omitzero member's value is known to be non-zero.
type zeroTest int

const (
	zeroIsZero    zeroTest = iota // !v.IsZero()
	zeroNil                       // != nil
	zeroString                    // != ""
	zeroBool                      // v
	zeroNumber                    // != 0
	zeroComposite                 // != T{}
)

// planCodecs plans keel_codecs.go: per tool, the reader of its arguments
// and the writer of its result (and all they use), the call types, and the
// shape checks. It returns the diagnostics that stop it instead.
func planCodecs(pkg *model.Package, schemas map[string]model.Schemas) (*codecPlan, []model.Diagnostic, error) {
	g := &codecState{pkg: pkg, funcs: map[string]string{}, taken: map[string]bool{}, patVars: map[string]string{}}
	p := &codecPlan{binders: map[string]string{}}
	bindersByKey := map[string]string{}
	for _, t := range pkg.Tools {
		in, err := parseNode(schemas[t.Name].Input)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: input schema: %w", t.Name, err)
		}
		out, err := parseNode(schemas[t.Name].Output)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: output schema: %w", t.Name, err)
		}
		input := &codecs{codecState: g, tool: t, side: "input", defs: schemamodel.DefsOf(in)}
		input.checkHeaders(in)
		read := input.reader(argsType(t), in, "", t.ArgsTypeName())
		output := &codecs{codecState: g, tool: t, side: "output", defs: schemamodel.DefsOf(out)}
		write := output.writer(t.Result, out, "", t.Ident()+"Result")
		writeArgs := input.writer(argsType(t), in, "", t.ArgsTypeName()) // for the policy, after the result's: what was generated before keeps its place
		switch untrusted := holdsUntrusted(out); {
		case untrusted && t.OwnText:
			output.fail("", "the result has untrusted members and an MCPText method: its text would carry text from outside without the marks the model reads it between; drop MCPText, or the x-keel-untrusted members")
		case untrusted && t.NoTextCopy:
			output.fail("", "the result has untrusted members and text=none: MCP's text block is the only copy that marks the text from outside, and text=none drops it for 2026-07-28 clients; drop text=none, or the x-keel-untrusted members")
		}
		k := read + "|" + write + "|" + fmt.Sprint(t.Returned != nil)
		if b, ok := bindersByKey[k]; ok {
			p.binders[t.Name] = b
			continue
		}
		// Named by its reader; a second handler with that reader (the same
		// arguments, another result) by its tool, whose name is unique.
		b := lowerFirst(strings.TrimPrefix(read, "read")) + "Handler"
		if g.taken[b] {
			b = lowerFirst(t.Ident()) + "Handler"
		}
		b = g.unique(b)
		bindersByKey[k], p.binders[t.Name] = b, b
		p.calls = append(p.calls, g.planCall(t, b, read, write, writeArgs))
	}
	for _, f := range pkg.Forms {
		fp, err := g.planForm(f, schemas[model.FormKey(f)].Input)
		if err != nil {
			return nil, nil, err
		}
		p.forms = append(p.forms, fp)
	}
	if len(g.diags) > 0 {
		return nil, g.diags, nil
	}
	p.shapes = planShapes(pkg)
	p.funcs, p.patterns, p.warnings = g.decls, g.patterns, g.warns
	return p, nil, nil
}

// planForm plans a form's reader against its reflected schema, and the
// schema the client is sent: the same, less what MCP's form schema has no
// place for (the root's additionalProperties and description; the reader
// still refuses a member the form does not have).
func (g *codecState) planForm(f model.FormType, doc []byte) (formPlan, error) {
	n, err := parseNode(doc)
	if err != nil {
		return formPlan{}, fmt.Errorf("form %s: %w", f.Name, err)
	}
	label := &model.Tool{Name: "ask.Elicit[" + f.Type.Obj().Name() + "]", Pos: f.Pos}
	form := &codecs{codecState: g, tool: label, side: "form", defs: schemamodel.DefsOf(n)}
	read := form.reader(f.Type, n, "", f.Type.Obj().Name())
	sent, err := formSchema(doc)
	if err != nil {
		return formPlan{}, fmt.Errorf("form %s: %w", f.Name, err)
	}
	return formPlan{typ: gocode.TypeCode(f.Type), schema: sent, read: read}, nil
}

// formSchema is a form's schema as the client is sent it: compact, with
// only the keywords MCP's form schema has.
func formSchema(doc []byte) (string, error) {
	root, err := schemamodel.Parse(doc)
	if err != nil {
		return "", err
	}
	root.Delete("additionalProperties")
	root.Delete("description")
	b, err := root.MarshalJSON()
	return string(b), err
}

// reader plans the function that reads a value of type t checked against
// n, and returns its name.
func (g *codecs) reader(t types.Type, n node, ptr, hint string) string {
	return g.codec(false, t, n, ptr, hint)
}

// writer plans the function that checks a value of type t against n and
// writes it, as json v2 would encode it, and returns its name.
func (g *codecs) writer(t types.Type, n node, ptr, hint string) string {
	return g.codec(true, t, n, ptr, hint)
}

// planStep plans the body of one reader or writer of a kind.
type planStep func(g *codecs, f *codecFunc, t types.Type, n node, ptr, hint string)

// step is the planner of a kind's reader or writer body.
func step(write bool, k kind) planStep {
	read, wr := (*codecs).readLeaf, (*codecs).writeLeaf
	switch k {
	case kStruct:
		read, wr = (*codecs).readStruct, (*codecs).writeStruct
	case kPointer:
		read, wr = (*codecs).readPointer, (*codecs).writePointer
	case kNullable:
		read, wr = (*codecs).readNullable, (*codecs).writeNullable
	case kSlice:
		read, wr = (*codecs).readSlice, (*codecs).writeSlice
	case kArray:
		read, wr = (*codecs).readArray, (*codecs).writeArray
	case kTuple:
		read, wr = (*codecs).readTuple, (*codecs).writeTuple
	case kUnion:
		read, wr = (*codecs).readUnion, (*codecs).writeUnion
	case kMap:
		read, wr = (*codecs).readMap, (*codecs).writeMap
	}
	if write {
		return wr
	}
	return read
}

// codec plans a reader or a writer once per (type, schema) pair; the
// functions keep the order they are first met in.
func (g *codecs) codec(write bool, t types.Type, n node, ptr, hint string) string {
	dir, id := "read", key("read", t, n)+"|"+g.argsKey(t)
	if write {
		dir, id = "write", key("write", t, n)+"|"+g.argsKey(t)
	}
	k, ok := g.kindOf(t, n, ptr)
	if !ok {
		return dir + "Unsupported"
	}
	return g.fn(id, dir, hintFor(t, n), hint, func(name string) *codecFunc {
		f := &codecFunc{name: name, write: write, typ: typeCode(t), kind: k}
		step(write, k)(g, f, t, n, ptr, strings.TrimPrefix(name, dir)) // what it holds is named after this function
		return f
	})
}

// planCall names the call type of the tools bound with handler.
func (g *codecState) planCall(t *model.Tool, handler, read, write, writeArgs string) callPlan {
	ct := strings.TrimSuffix(handler, "Handler") + "Call"
	g.taken[ct] = true
	return callPlan{handler: handler, call: ct, read: read, write: write, writeArgs: writeArgs,
		handlerType: handlerType(t), args: gocode.ArgsType(t), result: gocode.TypeCode(t.ResultType()), content: t.Returned != nil, text: t.OwnText}
}

// holdsUntrusted reports whether an output schema marks any member
// x-keel-untrusted.
func holdsUntrusted(out node) bool {
	found := false
	out.Walk(func(sub *schemamodel.Schema, _ jsontext.Pointer) { found = found || schemamodel.IsUntrusted(sub) })
	return found
}

// planShapes plans the shape check of each struct type generated code
// fills or reads field by field.
func planShapes(pkg *model.Package) []shapeCheck {
	var out []shapeCheck
	for _, n := range structShapes(pkg) {
		st := n.Underlying().(*types.Struct)
		s := shapeCheck{typ: gocode.TypeCode(n)}
		if exact, ok := shapeType(st); ok {
			s.exact = exact
		} else {
			for i := 0; i < st.NumFields(); i++ {
				if fd := st.Field(i); fd.Exported() {
					s.fields = append(s.fields, shapeField{fd.Name(), gocode.TypeCode(fd.Type())})
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// convType is the type a decoded x converts to, or nil where x already is
// a t (the decoder returns string, bool, int64, uint64 and float64, and
// the encoder takes them).
func (g *codecs) convType(t types.Type) jen.Code {
	if b, basic := types.Unalias(t).(*types.Basic); basic {
		switch b.Kind() {
		case types.String, types.Bool, types.Int64, types.Uint64, types.Float64:
			return nil
		}
	}
	return typeCode(t)
}
