package forms

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/schemamodel"
)

// geminiFormats are the formats the parameters form takes, by type; any
// other is said in words.
var geminiFormats = map[string]map[string]bool{
	"string":  {"enum": true, "date-time": true},
	"integer": {"int32": true, "int64": true},
	"number":  {"float": true, "double": true},
}

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
	if schema, _, err = inlineRefs(schema); err != nil {
		return nil, nil, err
	}
	doc, err := schemamodel.Parse(schema)
	if err != nil {
		return nil, nil, err
	}
	if !doc.IsObject() {
		return nil, nil, errors.New("the schema is not a JSON object")
	}
	var g geminiForm
	out, err = g.node(doc, "").MarshalJSON()
	return out, g.changed, err
}

type geminiForm struct {
	changed []string
}

func (g *geminiForm) note(path, format string, args ...any) {
	if path == "" {
		path = "the arguments"
	}
	g.changed = append(g.changed, path+": "+fmt.Sprintf(format, args...))
}

// node converts the schema s found at path (a name for a reader), keeping
// its keywords in their order: each keyword by its rule (geminiRules), a
// keyword genai.Schema holds as it is, an annotation it has no use for
// silently, any other dropped and noted; then the structure below it.
func (g *geminiForm) node(s *schemamodel.Schema, path string) *schemamodel.Schema {
	n := &geminiNode{g: g, s: s, out: s.Blank(), path: path, nullable: s.Type.Has("null"), types: s.Type.Without("null")}
	switch len(n.types) {
	case 0:
	case 1:
		n.out.Type = schemamodel.Types{strings.ToUpper(n.types[0])}
	default:
		n.say("type", "one of the types "+strings.Join(slices.Compact(sorted(n.types)), ", "))
	}
	for _, kw := range sorted(s.Keywords()) {
		if _, raw := s.OtherValue(kw); raw && schemamodel.IsTyped(kw) {
			g.malformed(s, kw, path)
			continue
		}
		switch form := schemamodel.RuleOf(kw).Gemini; {
		case geminiRules[kw] != nil:
			geminiRules[kw](n, kw)
		case form == schemamodel.GeminiWords:
			n.say(kw, schemamodel.Said(kw, string(s.Keyword(kw))))
		case form == schemamodel.GeminiKeep || form == schemamodel.GeminiFloat || form == schemamodel.GeminiWhole:
			v, ok := geminiValue(s, kw, form)
			if !ok {
				g.note(path, "%s dropped (not of the type genai.Schema holds)", kw)
				continue
			}
			n.out.SetKeyword(kw, v)
		case form == schemamodel.GeminiSilent:
		default:
			g.note(path, "%s dropped (no form for it)", kw)
		}
	}
	g.structure(n)
	if n.nullable {
		n.out.SetOther("nullable", jsontext.Value("true"))
	}
	sayInDescription(n.out, n.words)
	return n.out
}

// geminiNode is one schema node on its way into the parameters form.
type geminiNode struct {
	g        *geminiForm
	s, out   *schemamodel.Schema
	path     string
	types    []string // its types but null
	nullable bool
	words    []string // what its description says of what the form cannot hold
}

// say puts kw's meaning into the node's description, in words.
func (n *geminiNode) say(kw, text string) {
	n.words = append(n.words, text)
	n.g.note(n.path, "%s said in the description", kw)
}

// geminiRules are the keywords the parameters form does not hold as they
// are: each says its keyword in words, narrows it, or leaves it to the
// structure below (type, properties, items, the alternatives, required).
var geminiRules = map[string]func(n *geminiNode, kw string){
	"type": structural, "properties": structural, "items": structural, "required": structural,
	"anyOf": geminiAlternatives, "oneOf": geminiAlternatives,
	"prefixItems": func(n *geminiNode, kw string) {
		raw, _ := n.s.OtherValue(kw)
		var items []struct {
			Type any `json:"type"`
		}
		if json.Unmarshal(raw, &items) != nil {
			n.g.note(n.path, "prefixItems dropped (not a list of schemas)")
			return
		}
		var each []string
		for _, it := range items {
			t, _ := json.Marshal(it.Type)
			each = append(each, strings.Trim(string(t), `"`))
		}
		n.say(kw, "items in this order: "+strings.Join(each, ", "))
	},
	"not": func(n *geminiNode, kw string) {
		if words, ok := notWords(n.s.Not); ok {
			n.say(kw, words)
			return
		}
		n.g.note(n.path, "not dropped (no form for it)")
	},
	"dependentRequired": geminiProbe, "formatMinimum": geminiProbe, "formatExclusiveMinimum": geminiProbe,
	"formatMaximum": geminiProbe, "formatExclusiveMaximum": geminiProbe,
	"format": func(n *geminiNode, kw string) {
		ok := false
		for _, t := range n.types {
			ok = ok || geminiFormats[t][n.s.Format]
		}
		if ok {
			n.out.Format = n.s.Format
		} else {
			n.say(kw, "format: "+n.s.Format)
		}
	},
	"enum": geminiEnum, "const": geminiEnum,
	"uniqueItems": func(n *geminiNode, kw string) {
		if *n.s.UniqueItems {
			n.say(kw, "no item twice")
		}
	},
	"contentEncoding":  func(n *geminiNode, kw string) { n.say(kw, kw+": "+n.s.ContentEncoding) },
	"contentMediaType": func(n *geminiNode, kw string) { n.say(kw, kw+": "+n.s.ContentMediaType) },
	"additionalProperties": func(n *geminiNode, kw string) {
		if ap := n.s.AdditionalProperties; ap.IsObject() {
			what := "any value"
			if t := slices.Compact(sorted(ap.Type)); len(t) > 0 {
				what = "each value of type " + strings.Join(t, " or ")
			}
			n.say(kw, "members of any name, "+what)
		} else if ap.IsTrue() {
			n.say(kw, "other members allowed")
		}
		// false: a closed object, which the executor enforces
	},
}

// structural keywords are converted with the structure, after the rest.
func structural(*geminiNode, string) {}

// geminiAlternatives says a oneOf or anyOf of required sets in words; other
// alternatives are structure.
func geminiAlternatives(n *geminiNode, kw string) {
	if alts := alternatives(n.s, kw); schemamodel.IsRequiredSets(alts) {
		words, _ := alternativeWords(kw, alts)
		n.say(kw, words)
	}
}

// geminiProbe says dependentRequired or a text bound in the words the
// strict forms use for it.
func geminiProbe(n *geminiNode, kw string) {
	probe := &schemamodel.Schema{}
	v, _ := n.s.OtherValue(kw)
	probe.SetOther(kw, v)
	if w := slices.Concat(dependentsInWords(probe), textBoundsInWords(probe)); len(w) > 0 {
		n.say(kw, strings.Join(w, "; "))
	}
}

// geminiEnum keeps an enum or const of strings (a const as a one-value
// enum, null as nullable), and says any other in words.
func geminiEnum(n *geminiNode, kw string) {
	values := n.s.Enum
	if kw == "const" {
		values = []any{*n.s.Const}
	}
	texts, null, ok := stringEnum(values)
	n.nullable = n.nullable || null
	switch {
	case !ok:
		n.say(kw, "one of "+jsonList(slices.DeleteFunc(slices.Clone(values), func(x any) bool { return x == nil })))
	case kw == "const":
		n.out.Enum = texts
		n.g.note(n.path, "const as a one-value enum")
	default:
		n.out.Enum = texts
	}
}

// structure converts what is below the node: its properties, in the
// author's order (propertyOrdering), its items, and alternatives that are
// not required sets (anyOf; a lone null as nullable).
func (g *geminiForm) structure(n *geminiNode) {
	s, out, path := n.s, n.out, n.path
	if s.Properties != nil {
		out.Properties = []schemamodel.Property{}
		var ordering []string
		for _, p := range s.Properties {
			if p.Schema.IsObject() {
				out.Properties = append(out.Properties, schemamodel.Property{Name: p.Name, Schema: g.node(p.Schema, join(path, p.Name))})
				ordering = append(ordering, p.Name)
			}
		}
		if len(ordering) > 1 {
			list, _ := schemamodel.EncodeValue(stringsAsValues(ordering))
			out.SetOther("propertyOrdering", list)
		}
	}
	out.Required = slices.Clone(s.Required)
	if s.Items != nil {
		if s.Items.IsObject() {
			out.Items = g.node(s.Items, path+"[]")
		} else {
			g.note(path, "items dropped (not of the type genai.Schema holds)")
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		alts := alternatives(s, kw)
		if schemamodel.IsRequiredSets(alts) { // said in words above
			continue
		}
		if kw == "oneOf" && alts != nil {
			g.note(path, "oneOf read as anyOf")
		}
		for i, alt := range alts {
			switch {
			case !alt.IsObject():
			case alt.Type.Is("null") && len(alt.Keywords()) == 1:
				n.nullable = true
			default:
				out.AnyOf = append(out.AnyOf, g.node(alt, fmt.Sprintf("%s|%d", path, i)))
			}
		}
	}
}

// malformed notes a keyword whose value is not of its JSON type, dropped.
func (g *geminiForm) malformed(s *schemamodel.Schema, kw, path string) {
	raw, _ := s.OtherValue(kw)
	switch {
	case kw == "enum":
		g.note(path, "enum dropped (not a list)")
	case kw == "items" && raw.Kind() == '[':
		g.note(path, "items dropped (no form for a list of item schemas)")
	case kw == "required":
		g.note(path, "required dropped (not a list of names)")
	default:
		g.note(path, "%s dropped (not of the type genai.Schema holds)", kw)
	}
}

// geminiValue is s's value of kw as genai.Schema holds it, or false when
// it cannot: a bound a float64 holds, a count an int64 holds (written as a
// whole number), a default or example Go's JSON decoding reads.
func geminiValue(s *schemamodel.Schema, kw string, form schemamodel.Gemini) (jsontext.Value, bool) {
	v := s.Keyword(kw)
	switch form {
	case schemamodel.GeminiFloat:
		_, err := strconv.ParseFloat(string(v), 64)
		return v, err == nil
	case schemamodel.GeminiWhole:
		r := schemamodel.Number(v).Rat()
		if r == nil || !r.IsInt() || !r.Num().IsInt64() {
			return nil, false
		}
		return jsontext.Value(r.Num().String()), true
	}
	return v, true // description, pattern, title, default, example: as the model read them
}

// stringEnum splits an enum into its strings and whether null is one of
// its values; ok is false when some other value is.
func stringEnum(values []any) (texts []any, null, ok bool) {
	texts = []any{}
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

func stringsAsValues(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

func jsonList(values []any) string {
	var parts []string
	for _, v := range values {
		b, _ := schemamodel.EncodeValue(v)
		parts = append(parts, string(b))
	}
	return strings.Join(parts, ", ")
}
