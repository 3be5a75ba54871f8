package runtime

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/keelgen/keel/internal/schemamodel"
	"github.com/keelgen/keel/runtime/wire"
)

// maxDetails bounds the details of one result.
const maxDetails = 16

// argumentDetails turns why arguments were rejected into Details computed
// from the public input schema only: pointers are cut at the first token the
// schema does not declare (a map key, an unknown member), and no value from
// the call is copied.
func argumentDetails(err error, schema *schemamodel.Schema) []Detail {
	var out []Detail
	add := func(loc []string, keyword string) {
		out = append(out, Detail{Pointer: schemaPointer(schema, loc), Keyword: keyword})
	}
	var we *wire.Error
	var ie *inputError
	var ve *jsonschema.ValidationError
	var se *jsonv2.SemanticError
	switch {
	case errors.As(err, &we): // generated code: its pointers name only declared places
		out = append(out, Detail{Pointer: we.Pointer, Keyword: we.Keyword})
	case errors.As(err, &ie):
		add(nil, ie.keyword)
	case errors.As(err, &ve):
		walkLeaves(ve, func(v *jsonschema.ValidationError) {
			switch k := v.ErrorKind.(type) {
			case *kind.Required:
				for _, name := range k.Missing {
					add(append(append([]string(nil), v.InstanceLocation...), name), "required")
				}
			default:
				if path := v.ErrorKind.KeywordPath(); len(path) > 0 {
					add(v.InstanceLocation, path[len(path)-1])
				}
			}
		})
	case errors.As(err, &se):
		add(slices.Collect(se.JSONPointer.Tokens()), "type")
	default:
		add(nil, "json")
	}
	slices.SortFunc(out, func(a, b Detail) int {
		return cmp.Or(strings.Compare(a.Pointer, b.Pointer), strings.Compare(a.Keyword, b.Keyword))
	})
	out = compactDetails(out)
	if len(out) > maxDetails {
		out = out[:maxDetails]
	}
	return out
}

func walkLeaves(v *jsonschema.ValidationError, leaf func(*jsonschema.ValidationError)) {
	if len(v.Causes) == 0 {
		leaf(v)
		return
	}
	for _, c := range v.Causes {
		walkLeaves(c, leaf)
	}
}

func compactDetails(ds []Detail) []Detail {
	var out []Detail
	for i, d := range ds {
		if i == 0 || d != ds[i-1] {
			out = append(out, d)
		}
	}
	return out
}

// schemaPointer renders loc as an RFC 6901 pointer, keeping only tokens the
// schema declares: property names under "properties" and array indexes
// under "items".
func schemaPointer(schema *schemamodel.Schema, loc []string) string {
	var p jsontext.Pointer
	cur := schema
	for _, tok := range loc {
		if !cur.IsObject() {
			break
		}
		if sub := cur.Property(tok); sub.IsObject() {
			p = p.AppendToken(tok)
			cur = sub
			continue
		}
		if cur.Items.IsObject() {
			if _, err := strconv.ParseUint(tok, 10, 32); err == nil {
				p = p.AppendToken(tok)
				cur = cur.Items
				continue
			}
		}
		break
	}
	return string(p)
}
