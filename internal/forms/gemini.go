package forms

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/schemajson"
)

// geminiKept are the members of google.golang.org/genai's Schema: the
// OpenAPI 3.0 subset Gemini's older parameters field takes.
var geminiKept = map[string]bool{"anyOf": true, "default": true, "description": true, "enum": true,
	"example": true, "format": true, "items": true, "maxItems": true, "maxLength": true, "maxProperties": true,
	"maximum": true, "minItems": true, "minLength": true, "minProperties": true, "minimum": true,
	"pattern": true, "properties": true, "required": true, "title": true}

// geminiFormats are the formats the parameters form takes, by type; any
// other is said in words.
var geminiFormats = map[string]map[string]bool{
	"string":  {"enum": true, "date-time": true},
	"integer": {"int32": true, "int64": true},
	"number":  {"float": true, "double": true},
}

// geminiSilent are annotations the parameters form has no member for and
// a model has no use for.
var geminiSilent = map[string]bool{"$schema": true, "$id": true, "$comment": true, "examples": true}

// geminiName is what Gemini takes as a function name (keel's own rule also
// allows a leading digit or dash).
var geminiName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$`)

// GeminiNameProblem says why Gemini refuses a tool name; "" when it takes it.
func GeminiNameProblem(name string) string {
	if geminiName.MatchString(name) {
		return ""
	}
	return "Gemini wants a function name to start with a letter or an underscore"
}

// GeminiParameters rewrites schema into Gemini's parameters form, the
// OpenAPI 3.0 subset of genai.Schema: types in capitals, a null type as
// nullable, oneOf as anyOf, a string const as a one-value enum, the
// author's member order as propertyOrdering, and what the subset has no
// member for (exclusive bounds, multipleOf, non-string enums, formats it
// does not know, maps) in the member's description, in words. It returns
// what it changed, by path, and what it had to drop with no words to
// stand for it; the executor enforces the schema as generated either way.
func GeminiParameters(schema json.RawMessage) (out json.RawMessage, changed []string, err error) {
	doc, err := schemajson.Doc(schema)
	if err != nil {
		return nil, nil, err
	}
	order, err := schemajson.KeyOrder(schema)
	if err != nil {
		return nil, nil, err
	}
	g := geminiForm{order: order}
	res := g.node(doc, "", "")
	out, err = schemajson.MarshalInOrder(res, schema)
	return out, g.changed, err
}

type geminiForm struct {
	order   map[string][]string // JSON Pointer of an object in the schema → its member names
	changed []string
}

func (g *geminiForm) note(path, format string, args ...any) {
	if path == "" {
		path = "the arguments"
	}
	g.changed = append(g.changed, path+": "+fmt.Sprintf(format, args...))
}

// node converts the schema s found at ptr in the original (path names it
// for a reader).
func (g *geminiForm) node(s map[string]any, ptr, path string) map[string]any {
	out := map[string]any{}
	var words []string
	say := func(kw, text string) {
		words = append(words, text)
		g.note(path, "%s said in the description", kw)
	}
	types := schemajson.Strings(s["type"])
	if types["null"] {
		out["nullable"] = true
		delete(types, "null")
	}
	switch len(types) {
	case 0:
	case 1:
		for t := range types {
			out["type"] = strings.ToUpper(t)
		}
	default:
		names := slices.Sorted(maps.Keys(types))
		say("type", "one of the types "+strings.Join(names, ", "))
	}
	for _, kw := range sortedKeys(s) {
		v := s[kw]
		switch {
		case kw == "type" || kw == "properties" || kw == "items" || kw == "anyOf" || kw == "oneOf" || kw == "required":
			// structure, below
		case kw == "format":
			f, _ := v.(string)
			ok := false
			for t := range types {
				ok = ok || geminiFormats[t][f]
			}
			if ok {
				out[kw] = v
			} else {
				say(kw, "format: "+f)
			}
		case kw == "enum" || kw == "const":
			values, isList := v.([]any)
			if kw == "const" {
				values, isList = []any{v}, true
			}
			if !isList {
				g.note(path, "%s dropped (not a list)", kw)
				continue
			}
			texts, null, ok := stringEnum(values)
			if null {
				out["nullable"] = true
			}
			switch {
			case !ok:
				say(kw, "one of "+jsonList(slices.DeleteFunc(slices.Clone(values), func(x any) bool { return x == nil })))
			case kw == "const":
				out["enum"] = texts
				g.note(path, "const as a one-value enum")
			default:
				out["enum"] = texts
			}
		case kw == "exclusiveMinimum":
			say(kw, fmt.Sprintf("more than %v", v))
		case kw == "exclusiveMaximum":
			say(kw, fmt.Sprintf("less than %v", v))
		case kw == "multipleOf":
			say(kw, fmt.Sprintf("a multiple of %v", v))
		case kw == "uniqueItems":
			if v == true {
				say(kw, "no item twice")
			}
		case kw == "contentEncoding" || kw == "contentMediaType":
			say(kw, fmt.Sprintf("%s: %v", kw, v))
		case kw == "additionalProperties":
			if m, ok := v.(map[string]any); ok {
				what := "any value"
				if t := slices.Sorted(maps.Keys(schemajson.Strings(m["type"]))); len(t) > 0 {
					what = "each value of type " + strings.Join(t, " or ")
				}
				say(kw, "members of any name, "+what)
			} else if v == true {
				say(kw, "other members allowed")
			}
			// false: a closed object, which the executor enforces
		case geminiKept[kw]:
			if !geminiFits(kw, v) {
				g.note(path, "%s dropped (not of the type genai.Schema holds)", kw)
				continue
			}
			out[kw] = v
		case geminiSilent[kw]:
		default:
			g.note(path, "%s dropped (no form for it)", kw)
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		conv := map[string]any{}
		var ordering []any
		for _, name := range g.order[ptr+"/properties"] {
			if sub, ok := props[name].(map[string]any); ok {
				conv[name] = g.node(sub, string(jsontext.Pointer(ptr).AppendToken("properties").AppendToken(name)), join(path, name))
				ordering = append(ordering, name)
			}
		}
		out["properties"] = conv
		if len(ordering) > 1 {
			out["propertyOrdering"] = ordering
		}
	}
	if req, ok := s["required"].([]any); ok && geminiFits("required", req) {
		out["required"] = req
	} else if ok {
		g.note(path, "required dropped (not a list of names)")
	}
	if items, ok := s["items"].(map[string]any); ok {
		out["items"] = g.node(items, ptr+"/items", path+"[]")
	} else if _, ok := s["items"]; ok {
		g.note(path, "items dropped (no form for a list of item schemas)")
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		alts, ok := s[kw].([]any)
		if !ok {
			continue
		}
		if kw == "oneOf" {
			g.note(path, "oneOf read as anyOf")
		}
		var conv []any
		for i, alt := range alts {
			m, ok := alt.(map[string]any)
			if !ok {
				continue
			}
			if len(m) == 1 && m["type"] == "null" {
				out["nullable"] = true
				continue
			}
			conv = append(conv, g.node(m, fmt.Sprintf("%s/%s/%d", ptr, kw, i), fmt.Sprintf("%s|%d", path, i)))
		}
		prior, _ := out["anyOf"].([]any)
		out["anyOf"] = append(prior, conv...)
	}
	sayInDescription(out, words)
	return out
}

// geminiFits reports whether v has the JSON type genai.Schema gives kw.
func geminiFits(kw string, v any) bool {
	switch kw {
	case "description", "pattern", "title":
		_, ok := v.(string)
		return ok
	case "maximum", "minimum":
		_, ok := v.(float64)
		return ok
	case "maxItems", "maxLength", "maxProperties", "minItems", "minLength", "minProperties":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "required":
		list, _ := v.([]any)
		for _, x := range list {
			if _, ok := x.(string); !ok {
				return false
			}
		}
		return true
	}
	return true // default, example: any value
}

// stringEnum splits an enum into its strings and whether null is one of
// its values; ok is false when some other value is.
func stringEnum(values []any) (texts []any, null, ok bool) {
	for _, x := range values {
		switch x.(type) {
		case string:
			texts = append(texts, x)
		case nil:
			null = true
		default:
			return nil, null, false
		}
	}
	return texts, null, true
}

func jsonList(values []any) string {
	var parts []string
	for _, v := range values {
		b, _ := json.Marshal(v)
		parts = append(parts, string(b))
	}
	return strings.Join(parts, ", ")
}
