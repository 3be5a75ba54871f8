// Package model is the one intermediate form between keelgen's stages:
// load (go/packages) builds it, schema and render read it.
package model

import (
	"cmp"
	"encoding/json"
	"fmt"
	"go/constant"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/keelgen/keel/runtime"
)

// Package is what keelgen read: the tools of one or more handler packages.
type Package struct {
	Dir   string   // the first package's directory: the schema program runs there
	Paths []string // import paths of every handler package, sorted
	Tools []*Tool
	// Comments maps "pkgpath.Type" and "pkgpath.Type.Field" to doc text,
	// for the schema's descriptions.
	Comments map[string]string
	// Fset positions the types' declarations, for diagnostics at a field.
	Fset *token.FileSet
	// Exported are the package's exported top-level names, sorted: Go
	// names the model reads nowhere (keelgen -lint looks for them).
	Exported []string
	// Enums are the named types of the user's module, reached from some
	// tool, whose package declares exported constants of exactly that type:
	// each is an enum of those values, sorted by type.
	Enums []Enum
	// TextTypes are the types //keel:text directives declare.
	TextTypes TextTypes
	// Tuples are the struct types a //keel:tuple directive marks, keyed by
	// "pkgpath.Name": JSON arrays of their fields' values, in field order.
	Tuples map[string]token.Position
	// Unions are the struct types a //keel:union directive marks, keyed
	// by "pkgpath.Name": a JSON value of one of their pointer fields'
	// types, the one field set.
	Unions map[string]token.Position
	// NamedFirst are doc texts that start with the Go name they document
	// ("LookupIncident returns ...", "Limit is ..."), which the model reads
	// as written: keelgen -lint names each one a tool's model reads, where
	// it is written, with the edit that leaves the name out.
	NamedFirst map[string][]token.Position // by text: two comments may say the same
	// Forms are the types handlers ask a person to fill (ask.Elicit[T])
	// without writing T's form by hand, sorted by name: keelgen generates
	// each one's schema and reader.
	Forms []FormType
	// Module is the main module's path: a type declared outside it is a
	// library's, whose tags the author cannot change.
	Module string
}

// Library reports whether pkg is outside the main module: a library's.
func (p *Package) Library(pkg *types.Package) bool {
	if pkg == nil || p.Module == "" {
		return false
	}
	path := pkg.Path()
	return path != p.Module && !strings.HasPrefix(path, p.Module+"/")
}

// FormType is one type a handler asks for with ask.Elicit.
type FormType struct {
	Name string // "pkgpath.Name"
	Type *types.Named
	Pos  token.Position // the first call that asks for it
}

// FormKey is the key of a form's schema among the schema stage's: a tool
// name has no space, so no tool's key is a form's.
func FormKey(f FormType) string { return "form " + f.Name }

// TextTypes are the types a //keel:text directive declares: JSON strings
// through their text form, with the schema the author gives, keyed by
// "pkgpath.Name".
type TextTypes map[string]TextType

// TextType is one //keel:text directive.
type TextType struct {
	Name    string // "pkgpath.Name"
	Format  string // the schema's format, or ""
	Pattern string // the schema's pattern, or ""
	Pos     token.Position
}

// IsTuple reports whether n is a //keel:tuple struct of pkg.
func (pkg *Package) IsTuple(n *types.Named) bool {
	if n.Obj().Pkg() == nil {
		return false
	}
	_, ok := pkg.Tuples[n.Obj().Pkg().Path()+"."+n.Obj().Name()]
	return ok
}

// IsUnion reports whether n is a //keel:union struct of pkg.
func (pkg *Package) IsUnion(n *types.Named) bool {
	if n.Obj().Pkg() == nil {
		return false
	}
	_, ok := pkg.Unions[n.Obj().Pkg().Path()+"."+n.Obj().Name()]
	return ok
}

// Of returns the declaration of n, if any.
func (tt TextTypes) Of(n *types.Named) (TextType, bool) {
	if n.Obj().Pkg() == nil {
		return TextType{}, false
	}
	t, ok := tt[n.Obj().Pkg().Path()+"."+n.Obj().Name()]
	return t, ok
}

// Enum is a named string or integer type and its constants' values, in
// declaration order.
type Enum struct {
	Type   *types.Named
	Values []constant.Value
}

// Form is the shape of a handler's parameters.
type Form int

const (
	// StructArgs: func(ctx context.Context, args A) (R, error), A a struct.
	StructArgs Form = iota
	// PlainParams: func(ctx context.Context, p1 T1, p2 T2, ...) (R, error);
	// keelgen emits the argument struct.
	PlainParams
)

// Tool is one annotated handler.
type Tool struct {
	Name        string
	Version     string
	Effect      string // "read" or "write"
	Description string
	Timeout     time.Duration  // 0: the executor's default
	Errors      []string       // declared business error codes, sorted
	Title       string         // from //keel:title; "" when none
	Approve     string         // from //keel:approve: the approval question's wording; "" when none
	ApprovePos  token.Position // of the //keel:approve line
	Hints       runtime.Hints  // as the directive states them
	Deferred    bool           // this set loads it on demand (keelgen -defer)
	Namespace   string         // its group among deferred tools: the handler package's name
	Pos         token.Position // of the //keel:tool directive

	Func    string // handler function name
	PkgPath string // import path of the handler's package
	PkgName string // its name
	Form    Form
	Args    types.Type // StructArgs: the argument struct type
	Params  []Param    // PlainParams: one per parameter after ctx
	Result  types.Type // R, the data the output schema describes
	// Returned is what the handler returns when it is not R:
	// runtime.WithContent[R], whose content blocks may have the MIME types
	// of Content; nil otherwise.
	Returned types.Type
	Content  []string
	Scopes   []string // OAuth scopes a caller must hold (scopes=), sorted
	Groups   []string // tool groups it belongs to (groups=), sorted
	// LaxNumbers: an integer or number member is also read from a numeric
	// string, an integer from an integral number such as 2.0 (lax=numbers).
	LaxNumbers bool
	// OwnText: the result type has an MCPText() string method, the text an
	// MCP client's text block carries instead of the result's JSON.
	OwnText bool
	// NoTextCopy: a client of MCP's 2026-07-28 revision gets the result's
	// data in structuredContent alone, with no JSON copy as text (text=none).
	NoTextCopy bool
	// Icons and Meta are how an MCP client shows the tool (//keel:icon,
	// //keel:meta), checked.
	Icons []runtime.Icon
	Meta  map[string]json.RawMessage
	// RecursiveInput and RecursiveOutput: a type of the side contains
	// itself, so its schema keeps that type in $defs.
	RecursiveInput, RecursiveOutput bool
	// LibraryNulls: the result holds a library's struct (a type from
	// outside the main module) with a pointer field not tagged omitempty,
	// whose nil is null in the output schema.
	LibraryNulls bool
}

// ResultType is the type the handler returns: Returned, else Result.
func (t *Tool) ResultType() types.Type {
	if t.Returned != nil {
		return t.Returned
	}
	return t.Result
}

// Param is one plain parameter, and the field keelgen emits for it.
type Param struct {
	Name        string // Go parameter name
	Field       string // exported field name in the argument struct
	JSONName    string // snake_case
	Type        types.Type
	Description string // from //keel:param; "" when none
}

// Ident is the Go identifier derived from the tool name: lookup_incident →
// LookupIncident. Names that start with a digit get a leading "T".
func (t *Tool) Ident() string { return Ident(t.Name) }

// ArgsTypeName is the name of the emitted argument struct (PlainParams).
func (t *Tool) ArgsTypeName() string { return t.Ident() + "Args" }

// Ident maps a tool name to a Go identifier.
func Ident(name string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	s := b.String()
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "T" + s
	}
	return s
}

// Schemas are one tool's input and output JSON Schema, formatted as keelgen
// writes them.
type Schemas struct {
	Input, Output []byte
}

// Diagnostic is one problem, at a position in the user's source.
type Diagnostic struct {
	Pos     token.Position
	Message string
}

// Format renders "file:line:col: message", with the file relative to dir
// when it lies below it.
func (d Diagnostic) Format(dir string) string {
	file := d.Pos.Filename
	if dir != "" && file != "" {
		if rel, err := filepath.Rel(dir, file); err == nil && !strings.HasPrefix(rel, "..") {
			file = rel
		}
	}
	if file == "" {
		return d.Message
	}
	return fmt.Sprintf("%s:%d:%d: %s", file, d.Pos.Line, d.Pos.Column, d.Message)
}

func (d Diagnostic) String() string { return d.Format("") }

// SortDiagnostics orders by file, line, column, then message.
func SortDiagnostics(ds []Diagnostic) {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(strings.Compare(a.Pos.Filename, b.Pos.Filename), cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column), strings.Compare(a.Message, b.Message))
	})
}
