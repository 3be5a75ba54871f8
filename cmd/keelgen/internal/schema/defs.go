package schema

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/schemamodel"
)

// Dialect is the $schema a schema with $defs declares.
const Dialect = "https://json-schema.org/draft/2020-12/schema"

// keepRecursiveDefs rewrites a schema the reflector wrote with a $ref root
// and $defs for every named type into keel's shape: the root inlined, every
// type inlined where it is used but those on a cycle, which only $defs and
// $ref can write. Those keep a $defs entry each, named in snake_case
// (FilterExpr: filter_expr), and the schema declares its dialect.
// An input's root has no description: the tool's says it.
func keepRecursiveDefs(doc []byte, input bool) ([]byte, error) {
	root, err := schemamodel.Parse(doc)
	if err != nil {
		return nil, err
	}
	all := schemamodel.DefsOf(root)
	defs, order := map[string]*schemamodel.Schema{}, all.Names
	for _, d := range order {
		defs[d] = all.Get(d)
	}
	recursive := cycles(defs, order)
	names := map[string]string{}
	taken := map[string]string{}
	for _, d := range order {
		if recursive[d] {
			names[d] = snake(d)
			if other, ok := taken[names[d]]; ok {
				return nil, fmt.Errorf("types %s and %s are both named %s in $defs", other, d, names[d])
			}
			taken[names[d]] = d
		}
	}
	var inline func(s *schemamodel.Schema) error
	inline = func(s *schemamodel.Schema) error {
		var failed error
		s.Walk(func(sub *schemamodel.Schema, _ jsontext.Pointer) {
			target, ok := schemamodel.Ref(sub)
			if !ok || failed != nil {
				return
			}
			def := defs[target]
			switch {
			case def == nil:
				failed = fmt.Errorf("$ref to %q, which $defs lacks", target)
			case recursive[target]:
				sub.SetOther("$ref", schemamodel.Quote(schemamodel.DefsPrefix+names[target]))
			default:
				// The type's schema where it is used, the use's own keywords
				// (a field's description) over the type's; the walk goes on
				// into it.
				*sub = *schemamodel.Merge(def.Clone(), sub)
			}
		})
		return failed
	}
	// The root is its type's schema, recursive or not.
	if target, ok := schemamodel.Ref(root); ok && defs[target] != nil {
		*root = *schemamodel.Merge(defs[target].Clone(), root)
		root.Delete("$defs")
	}
	if err := inline(root); err != nil {
		return nil, err
	}
	root.Delete("$defs")
	if input {
		root.Delete("description")
	}
	var kept []string
	for _, d := range order {
		if recursive[d] {
			if err := inline(defs[d]); err != nil {
				return nil, err
			}
			kept = append(kept, d)
		}
	}
	body, err := root.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteString(`{"$schema":`)
	out.Write(schemamodel.Quote(Dialect))
	if inner := bytes.TrimSpace(body[1 : len(body)-1]); len(inner) > 0 {
		out.WriteByte(',')
		out.Write(inner)
	}
	out.WriteString(`,"$defs":{`)
	for i, d := range kept {
		if i > 0 {
			out.WriteByte(',')
		}
		b, err := defs[d].MarshalJSON()
		if err != nil {
			return nil, err
		}
		out.Write(schemamodel.Quote(names[d]))
		out.WriteByte(':')
		out.Write(b)
	}
	out.WriteString("}}")
	return out.Bytes(), nil
}

// cycles reports the defs that reach themselves through $refs.
func cycles(defs map[string]*schemamodel.Schema, order []string) map[string]bool {
	edges := map[string][]string{}
	for _, d := range order {
		defs[d].Walk(func(sub *schemamodel.Schema, _ jsontext.Pointer) {
			if target, ok := schemamodel.Ref(sub); ok && !slices.Contains(edges[d], target) {
				edges[d] = append(edges[d], target)
			}
		})
	}
	out := map[string]bool{}
	for _, d := range order {
		seen := map[string]bool{}
		stack := slices.Clone(edges[d])
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if n == d {
				out[d] = true
				break
			}
			if !seen[n] {
				seen[n] = true
				stack = append(stack, edges[n]...)
			}
		}
	}
	return out
}

// snake is a Go type name in snake_case: FilterExpr → filter_expr,
// HTTPRoute → http_route.
func snake(name string) string {
	var b strings.Builder
	runes := []rune(name)
	for i, r := range runes {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(runes[i-1]) || i+1 < len(runes) && unicode.IsLower(runes[i+1])) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
