package load

import (
	"fmt"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

// typeProblem is a type keel cannot describe with a JSON Schema.
type typeProblem struct {
	pos token.Pos // the field's position, or NoPos
	msg string
}

// schemaChecker walks a type as encoding/json would see it and reports what
// has no JSON Schema: channels, funcs, complex numbers, interfaces without an
// explicit JSONSchema method, non-string map keys, and json tag options the
// schema reflector does not model. A recursive type is no problem: it is
// noted, and its schema is written with $defs and $ref.
type schemaChecker struct {
	qualifier types.Qualifier
	// output: the type is a result's; a pointer field must be omitempty.
	output bool
	// texts are the //keel:text declarations.
	texts model.TextTypes
	// library reports a package outside the main module: a nil pointer
	// field of its types is null in the output schema, since the author
	// cannot tag it omitempty.
	library      func(*types.Package) bool
	libraryNulls bool // a library's pointer field without omitempty was met
	// union reports a //keel:union struct: its pointer fields are its
	// alternatives, not members.
	union     func(*types.Named) bool
	stack     []*types.Named
	problems  []typeProblem
	recursive bool // a named type contains itself
	// named are the named types met, by name: a recursive side's schema
	// names each in $defs by its name alone, so two may not share one.
	named map[string][]*types.Named
}

func (c *schemaChecker) report(pos token.Pos, path string, format string, args ...any) {
	c.problems = append(c.problems, typeProblem{pos: pos, msg: path + ": " + fmt.Sprintf(format, args...)})
}

// knownLeaf reports types the reflector maps to a fixed schema.
func knownLeaf(n *types.Named) bool {
	obj := n.Obj()
	if obj.Pkg() == nil {
		return false
	}
	switch obj.Pkg().Path() + "." + obj.Name() {
	case "time.Time", "net/url.URL", "net.IP", "encoding/json.RawMessage", "encoding/json/jsontext.Value": // an alias under GOEXPERIMENT=jsonv2
		return true
	}
	return false
}

func (c *schemaChecker) check(t types.Type, path string, pos token.Pos) {
	switch t := t.(type) {
	case *types.Alias:
		c.check(types.Unalias(t), path, pos)
	case *types.Named:
		if knownLeaf(t) || hasSchemaMethod(t) || model.IsTextType(t, c.texts) {
			return // a JSON form of its own: a string, for a text type
		}
		for _, s := range c.stack {
			if types.Identical(s, t) {
				c.recursive = true
				return
			}
		}
		if c.named == nil {
			c.named = map[string][]*types.Named{}
		}
		if !slices.ContainsFunc(c.named[t.Obj().Name()], func(n *types.Named) bool { return types.Identical(n, t) }) {
			c.named[t.Obj().Name()] = append(c.named[t.Obj().Name()], t)
		}
		if st, ok := t.Underlying().(*types.Struct); ok && c.union != nil && c.union(t) {
			for f := range st.Fields() {
				c.check(f.Type(), path+"."+f.Name(), f.Pos())
			}
			return
		}
		c.stack = append(c.stack, t)
		c.check(t.Underlying(), path, pos)
		c.stack = c.stack[:len(c.stack)-1]
	case *types.Basic:
		switch {
		case t.Info()&(types.IsBoolean|types.IsInteger|types.IsFloat|types.IsString) != 0 && t.Kind() != types.Uintptr:
		default:
			c.report(pos, path, "type %s has no JSON Schema", t.Name())
		}
	case *types.Pointer:
		c.check(t.Elem(), path, pos)
	case *types.Slice:
		c.check(t.Elem(), path+"[]", pos)
	case *types.Array:
		c.check(t.Elem(), path+"[]", pos)
	case *types.Map:
		if b, ok := t.Key().Underlying().(*types.Basic); !ok || b.Info()&(types.IsString|types.IsInteger) == 0 {
			c.report(pos, path, "map key type %s has no JSON form (use string keys)", types.TypeString(t.Key(), c.qualifier))
		}
		c.check(t.Elem(), path+"{}", pos)
	case *types.Struct:
		c.checkStruct(t, path)
	case *types.Interface:
		c.checkInterface(t, path, pos)
	case *types.Chan:
		c.report(pos, path, "channels cannot be sent as JSON")
	case *types.Signature:
		c.report(pos, path, "funcs cannot be sent as JSON")
	case *types.TypeParam:
		c.report(pos, path, "type parameters have no JSON Schema")
	default:
		c.report(pos, path, "type %s has no JSON Schema", types.TypeString(t, c.qualifier))
	}
}

// checkInterface allows any in a result, an open value (JSON data a
// library decoded, written as it is), and no other interface.
func (c *schemaChecker) checkInterface(t *types.Interface, path string, pos token.Pos) {
	switch {
	case t.Empty() && c.output:
	case t.Empty():
		c.report(pos, path, "an open value (any) is allowed in a result only: a model's arguments are members the schema declares")
	default:
		c.report(pos, path, "interface type has no JSON Schema (use a concrete type, or give the type a JSONSchema method)")
	}
}

// unsupportedJSONOptions are json v2 tag options whose meaning the schema
// reflector does not model; allowing them would let schema and decoder drift.
var unsupportedJSONOptions = map[string]bool{"inline": true, "unknown": true, "case:ignore": true, "nocase": true, "case:strict": true, "format": true}

func (c *schemaChecker) checkStruct(s *types.Struct, path string) {
	for i := 0; i < s.NumFields(); i++ {
		f := s.Field(i)
		if msg := tagSyntaxError(s.Tag(i)); msg != "" {
			c.report(f.Pos(), path+"."+f.Name(), "struct tag %s: reflect cannot read it, so its json and jsonschema keys would be ignored", msg)
			continue
		}
		tag := reflect.StructTag(s.Tag(i)).Get("json")
		if tag == "-" || (!f.Exported() && !f.Embedded()) {
			continue
		}
		for _, opt := range strings.Split(tag, ",")[1:] {
			key, _, _ := strings.Cut(opt, ":")
			if unsupportedJSONOptions[opt] || unsupportedJSONOptions[key] {
				c.report(f.Pos(), path+"."+f.Name(), "json tag option %q is not supported by keel (the schema would not describe it)", opt)
			}
		}
		for _, piece := range schemaTagPieces(reflect.StructTag(s.Tag(i)).Get("jsonschema")) {
			if msg := schemaPieceProblem(piece, f.Type(), c.texts); msg != "" {
				c.report(f.Pos(), path+"."+f.Name(), "jsonschema tag: %s", msg)
			}
		}
		if _, isPtr := types.Unalias(f.Type()).(*types.Pointer); c.output && isPtr && !hasOption(tag, "omitempty") && !hasOption(tag, "omitzero") && c.library(f.Pkg()) {
			c.libraryNulls = true
		} else if c.output && isPtr && !hasOption(tag, "omitempty") && !hasOption(tag, "omitzero") {
			c.report(f.Pos(), path+"."+f.Name(), "pointer field without omitempty: a nil value is null, which the output schema refuses "+
				"(the field is required and not nullable); add omitempty to its json tag, or make it a value")
		}
		c.check(f.Type(), path+"."+f.Name(), f.Pos())
	}
}

// bareSchemaTags are the jsonschema tag words that take no value.
var bareSchemaTags = map[string]bool{"required": true, "nullable": true, "-": true}

// schemaTagPieces splits a jsonschema tag as the reflector does: at every
// comma not escaped as \,.
func schemaTagPieces(tag string) []string {
	var out []string
	for _, p := range strings.Split(tag, ",") {
		if n := len(out); n > 0 && strings.HasSuffix(out[n-1], "\\") {
			out[n-1] = strings.TrimSuffix(out[n-1], "\\") + "," + p
			continue
		}
		out = append(out, p)
	}
	return out
}

func hasOption(tag, option string) bool {
	_, opts, _ := strings.Cut(tag, ",")
	return slices.Contains(strings.Split(opts, ","), option)
}
