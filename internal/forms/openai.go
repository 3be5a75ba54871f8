// Package forms holds the schema forms the providers take, and what each
// loses: OpenAI's strict mode and Ollama's safe form. The adapters write
// definitions with them, and keelgen's -targets warns with them at
// generate time, so the generator imports no adapter.
package forms

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/schemajson"
	"github.com/keelgen/keel/runtime"
)

// refused are keywords strict mode does not accept and that no sentence can
// stand for: a tool that uses one is offered non-strict.
var refused = []string{"patternProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems",
	"contains", "minContains", "maxContains", "allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas"}

// sayInDescription ends a schema's description with notes, in one
// parenthesis, for a model to read what the schema no longer says.
func sayInDescription(s map[string]any, notes []string) {
	if len(notes) == 0 {
		return
	}
	desc, _ := s["description"].(string)
	s["description"] = strings.TrimSpace(desc + " (" + strings.Join(notes, "; ") + ")")
}

// describe moves the keywords strict mode does not accept, but a model can
// read as words, into the member's description ("at most 200 characters"),
// so the tool stays strict; the executor still enforces them, on the
// schema as generated.
func describe(s map[string]any) {
	var notes []string
	count := func(kw, unit string, most bool) {
		v, ok := s[kw]
		if !ok {
			return
		}
		delete(s, kw)
		word := "at least"
		if most {
			word = "at most"
		}
		n := fmt.Sprint(v)
		if n != "1" {
			unit += "s"
		}
		notes = append(notes, fmt.Sprintf("%s %s %s", word, n, unit))
	}
	count("minLength", "character", false)
	count("maxLength", "character", true)
	count("minProperties", "member", false)
	count("maxProperties", "member", true)
	if u, ok := s["uniqueItems"]; ok {
		delete(s, "uniqueItems")
		if u == true {
			notes = append(notes, "no item twice")
		}
	}
	if f, ok := s["format"].(string); ok && !strictFormats[f] {
		delete(s, "format")
		notes = append(notes, "format: "+f)
	}
	for _, kw := range []string{"contentEncoding", "contentMediaType"} {
		if v, ok := s[kw].(string); ok {
			delete(s, kw)
			notes = append(notes, kw+": "+v)
		}
	}
	sayInDescription(s, notes)
}

// strictFormats are the string formats strict mode accepts.
var strictFormats = map[string]bool{"date-time": true, "time": true, "date": true, "duration": true, "email": true,
	"hostname": true, "ipv4": true, "ipv6": true, "uuid": true}

// OpenAIStrict rewrites schema into the form OpenAI's strict mode requires:
// every object closed, every property required, optional properties
// nullable. It returns the problems that make that impossible instead,
// with the path of each. nulls says where a null the model sends means
// "absent".
func OpenAIStrict(schema json.RawMessage) (out json.RawMessage, nulls *NullShape, problems []string) {
	doc, err := schemajson.Doc(schema)
	if err != nil {
		return nil, nil, []string{"the schema is not a JSON object"}
	}
	nulls = &NullShape{}
	problems = strictify(doc, "", nulls)
	if len(problems) > 0 {
		return nil, nil, problems
	}
	out, err = schemajson.MarshalInOrder(doc, schema) // the author's property order, which the model generates in
	if err != nil {
		return nil, nil, []string{err.Error()}
	}
	return out, nulls, nil
}

// OpenAIStrictProblems says why a schema cannot be offered in strict mode; none
// when it can.
func OpenAIStrictProblems(schema json.RawMessage) []string {
	_, _, problems := OpenAIStrict(schema)
	return problems
}

// strictNode does to one schema node what both providers' strict modes
// ask: the keywords they take only as words moved into its description,
// the ones they refuse reported, a value of any type and a map refused, an
// object closed. mode names the strict mode in the problems.
func strictNode(s map[string]any, mode string, refused []string, describe func(map[string]any), at func(string, ...any)) {
	describe(s)
	for _, kw := range refused {
		if _, ok := s[kw]; ok {
			at("keyword %q is not supported in %s", kw, mode)
		}
	}
	if _, ok := s["type"]; !ok && s["enum"] == nil && s["const"] == nil && s["anyOf"] == nil {
		at("a value of any type cannot be expressed in %s", mode)
	}
	if _, ok := s["properties"]; !ok && s["type"] != "object" {
		return
	}
	switch ap := s["additionalProperties"].(type) {
	case bool:
		if ap {
			at("additionalProperties must be false in %s", mode)
		}
	case nil:
		s["additionalProperties"] = false
	default:
		at("a map (additionalProperties with a schema) cannot be expressed in %s", mode)
	}
}

func strictify(s map[string]any, path string, nulls *NullShape) []string {
	var problems []string
	at := problemAt(&problems, path)
	strictNode(s, "strict mode", refused, describe, at)
	if props, ok := s["properties"].(map[string]any); ok || s["type"] == "object" {
		_, req := schemajson.Properties(s)
		var required []any
		for _, name := range slices.Sorted(maps.Keys(props)) {
			sub, _ := props[name].(map[string]any)
			if sub == nil {
				at("property %q has no schema", name)
				continue
			}
			problems = append(problems, strictify(sub, join(path, name), nulls.member(name))...)
			if !req[name] {
				nulls.optional(name)
				nullable(sub)
			}
			required = append(required, name)
		}
		if props != nil {
			s["required"] = required
		}
	}
	itemsAndAlternatives(s, path, func(sub map[string]any, path string, alternative bool) {
		shape := nulls // the alternatives share one shape: a value's members are read alike whichever it matches
		if !alternative {
			shape = nulls.elements()
		}
		problems = append(problems, strictify(sub, path, shape)...)
	})
	return problems
}

// problemAt is the reporter of a strict walk's problems at path ("the
// root" for the top).
func problemAt(problems *[]string, path string) func(format string, args ...any) {
	return func(format string, args ...any) {
		where := path
		if where == "" {
			where = "the root"
		}
		*problems = append(*problems, fmt.Sprintf("%s: %s", where, fmt.Sprintf(format, args...)))
	}
}

// itemsAndAlternatives calls fn with s's items schema (at path+"[]") and
// each of its anyOf alternatives (at path+"|i"): where a strict walk
// descends besides the properties.
func itemsAndAlternatives(s map[string]any, path string, fn func(sub map[string]any, path string, alternative bool)) {
	if items, ok := s["items"].(map[string]any); ok {
		fn(items, path+"[]", false)
	}
	alts, _ := s["anyOf"].([]any)
	for i, alt := range alts {
		if m, ok := alt.(map[string]any); ok {
			fn(m, fmt.Sprintf("%s|%d", path, i), true)
		}
	}
}

// nullable lets a property be null: ["T", "null"] and null in its enum, or
// a null alternative in its anyOf, or else (a const) an anyOf of the value
// and null.
func nullable(s map[string]any) {
	if alts, ok := s["anyOf"].([]any); ok && s["type"] == nil {
		for _, alt := range alts {
			if m, ok := alt.(map[string]any); ok && m["type"] == "null" {
				return
			}
		}
		s["anyOf"] = append(alts, map[string]any{"type": "null"})
		return
	}
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
	case []any:
		if !slices.Contains(t, any("null")) {
			s["type"] = append(t, "null")
		}
	case nil:
		if _, ok := s["const"]; ok {
			alt := map[string]any{}
			for k, v := range s {
				if k != "description" {
					alt[k] = v
					delete(s, k)
				}
			}
			s["anyOf"] = []any{alt, map[string]any{"type": "null"}}
			return
		}
	}
	if e, ok := s["enum"].([]any); ok && !slices.Contains(e, nil) {
		s["enum"] = append(e, nil)
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// NullShape says, for one strict tool, where a null the model sends stands
// for a member that was optional before strict mode made it required and
// nullable: per object, its optional members and the shapes of its members,
// of its array items, and of its anyOf alternatives (merged).
type NullShape struct {
	nullable map[string]bool
	members  map[string]*NullShape
	items    *NullShape
}

func (n *NullShape) optional(name string) {
	if n.nullable == nil {
		n.nullable = map[string]bool{}
	}
	n.nullable[name] = true
}

func (n *NullShape) member(name string) *NullShape {
	if n.members == nil {
		n.members = map[string]*NullShape{}
	}
	if n.members[name] == nil {
		n.members[name] = &NullShape{}
	}
	return n.members[name]
}

func (n *NullShape) elements() *NullShape {
	if n.items == nil {
		n.items = &NullShape{}
	}
	return n.items
}

// Drop removes, from a strict tool's arguments, the members that are null
// where the shape says null means absent, in one streaming pass: linear in
// the size, with the executor's caps applied first. Arguments over the caps,
// or that do not parse strictly (duplicates, invalid UTF-8, trailing data),
// and arguments with nothing to drop are returned untouched, so the
// executor's verdict on them stands.
func (n *NullShape) Drop(args json.RawMessage, limits runtime.Limits) json.RawMessage {
	if n == nil || len(args) > limits.MaxArgumentBytes {
		return args
	}
	var out bytes.Buffer
	w := nullDropper{dec: jsontext.NewDecoder(bytes.NewReader(args)), enc: jsontext.NewEncoder(&out), maxDepth: limits.MaxDepth}
	if err := w.value(n, 1); err != nil || !w.dropped {
		return args
	}
	if _, err := w.dec.ReadToken(); err != io.EOF { // trailing data: the executor says so
		return args
	}
	return bytes.TrimSpace(out.Bytes())
}

// nullDropper copies one JSON value token by token, dropping nulls where
// its shape allows, and stops at the executor's depth cap.
type nullDropper struct {
	dec      *jsontext.Decoder
	enc      *jsontext.Encoder
	maxDepth int
	dropped  bool
}

var errTooDeep = errors.New("nested deeper than the executor's limit")

// noNulls is the shape of a part of the arguments where nothing is dropped.
var noNulls = &NullShape{}

func (w *nullDropper) value(n *NullShape, depth int) error {
	if n == nil {
		n = noNulls
	}
	kind := w.dec.PeekKind()
	if kind != '{' && kind != '[' {
		v, err := w.dec.ReadValue()
		if err != nil {
			return err
		}
		return w.enc.WriteValue(v)
	}
	if depth > w.maxDepth {
		return errTooDeep
	}
	if err := w.copyToken(); err != nil { // { or [
		return err
	}
	for {
		switch w.dec.PeekKind() {
		case '}', ']':
			return w.copyToken()
		case 0:
			_, err := w.dec.ReadToken()
			return err
		}
		if kind == '[' {
			if err := w.value(n.items, depth+1); err != nil {
				return err
			}
			continue
		}
		tok, err := w.dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String() // before the next read voids tok
		if n.nullable[name] && w.dec.PeekKind() == 'n' {
			if _, err := w.dec.ReadToken(); err != nil {
				return err
			}
			w.dropped = true
			continue
		}
		if err := w.enc.WriteToken(jsontext.String(name)); err != nil {
			return err
		}
		if err := w.value(n.members[name], depth+1); err != nil {
			return err
		}
	}
}

func (w *nullDropper) copyToken() error {
	t, err := w.dec.ReadToken()
	if err != nil {
		return err
	}
	return w.enc.WriteToken(t)
}
