package forms

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/keelgen/keel/internal/schemamodel"
)

// RefDepth is how many levels of a recursive type a provider form that
// takes no $ref is given: the type's schema inlined into itself that many
// times, the member that would nest deeper left out. The executor still
// reads and checks any depth its limits allow.
const RefDepth = 3

// MaxInlined bounds the $refs one schema's inlining expands: types that
// refer to each other multiply the copies with each level, and a form is
// for a prompt. Past it, further members are left out as past the depth.
const MaxInlined = 1000

// inlineRefs is schema with every $ref to its $defs replaced by the schema
// it names, each recursive type to RefDepth levels, for the forms that
// cannot take $ref; $defs and $schema go. cut lists the members left out,
// by path. A schema without $defs is returned as it is.
func inlineRefs(schema json.RawMessage) (out json.RawMessage, cut []string, err error) {
	if !bytes.Contains(schema, []byte(`"$defs"`)) {
		return schema, nil, nil
	}
	root, err := schemamodel.Parse(schema)
	if err != nil {
		return nil, nil, err
	}
	in := &inliner{defs: schemamodel.DefsOf(root), depth: map[string]int{}}
	root = in.schema(root, "")
	root.Delete("$defs")
	root.Delete("$schema")
	b, err := root.MarshalJSON()
	return b, in.cut, err
}

type inliner struct {
	defs     schemamodel.Defs
	depth    map[string]int // levels of each $defs name on the current path
	expanded int            // $refs inlined so far, up to MaxInlined
	cut      []string
}

// schema is s with its $refs inlined; nil when s is a $ref past RefDepth.
func (in *inliner) schema(s *schemamodel.Schema, path string) *schemamodel.Schema {
	if s == nil {
		return nil
	}
	if name, ok := schemamodel.Ref(s); ok {
		if in.defs.Get(name) == nil || in.depth[name] >= RefDepth || in.expanded >= MaxInlined {
			return nil
		}
		in.expanded++
		in.depth[name]++
		defer func() { in.depth[name]-- }()
		resolved, _ := in.defs.Resolve(s)
		s = resolved
	}
	s = s.Clone()
	var kept []schemamodel.Property
	for _, p := range s.Properties {
		if sub := in.schema(p.Schema, join(path, p.Name)); sub != nil {
			kept = append(kept, schemamodel.Property{Name: p.Name, Schema: sub})
			continue
		}
		in.cut = append(in.cut, join(path, p.Name))
		s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == p.Name })
		s.Description = strings.TrimSpace(s.Description + fmt.Sprintf(" (%s nested deeper than %d levels is not offered here.)", p.Name, RefDepth))
	}
	if len(s.Properties) > 0 {
		s.Properties = kept
	}
	if s.Items != nil {
		if s.Items = in.schema(s.Items, path+"[]"); s.Items == nil {
			return nil
		}
	}
	if s.AdditionalProperties.IsObject() {
		if s.AdditionalProperties = in.schema(s.AdditionalProperties, path+"{}"); s.AdditionalProperties == nil {
			return nil
		}
	}
	for _, alts := range []*[]*schemamodel.Schema{&s.AnyOf, &s.OneOf, &s.AllOf} {
		if len(*alts) == 0 {
			continue
		}
		var keep []*schemamodel.Schema
		for _, alt := range *alts {
			if sub := in.schema(alt, path); sub != nil {
				keep = append(keep, sub)
			}
		}
		if len(keep) == 0 {
			return nil
		}
		*alts = keep
	}
	if s.Not != nil {
		s.Not = in.schema(s.Not, path)
	}
	return s
}

// RefNote says, for -targets, what a provider form that takes no $ref is
// given of a recursive type; "" for a schema without $defs.
func RefNote(schema json.RawMessage) string {
	_, cut, err := inlineRefs(schema)
	if err != nil || len(cut) == 0 {
		return ""
	}
	root, _ := schemamodel.Parse(schema)
	return fmt.Sprintf("recursive types %s inlined to %d levels; the members that would nest deeper are left out in %d places "+
		"(keel still reads and checks any depth its limits allow)", strings.Join(schemamodel.DefsOf(root).Names, ", "), RefDepth, len(cut))
}
