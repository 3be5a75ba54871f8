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

	"github.com/keelgen/keel/internal/schemamodel"
)

// refused are keywords strict mode does not accept and that no sentence can
// stand for: a tool that uses one is offered non-strict.
var refused = schemamodel.With(func(r schemamodel.Rule) bool { return r.OpenAI == schemamodel.StrictRefuse })

// openAIWords are the bounds strict mode takes only as words.
var openAIWords = schemamodel.With(func(r schemamodel.Rule) bool { return r.OpenAI == schemamodel.StrictWords })

// sayInDescription ends a schema's description with notes, in one
// parenthesis, for a model to read what the schema no longer says.
func sayInDescription(s *schemamodel.Schema, notes []string) {
	if len(notes) == 0 {
		return
	}
	desc := s.Description
	s.Delete("description") // an empty one, kept raw, included
	s.Description = strings.TrimSpace(desc + " (" + strings.Join(notes, "; ") + ")")
}

// moveToWords deletes keyword from s and returns its value as written, or
// "" when s has none.
func moveToWords(s *schemamodel.Schema, keyword string) string {
	v := s.Keyword(keyword)
	s.Delete(keyword)
	return string(v)
}

// uniqueInWords moves uniqueItems out of s, as the words a model reads.
func uniqueInWords(s *schemamodel.Schema) []string {
	if !s.Has("uniqueItems") {
		return nil
	}
	unique := s.UniqueItems != nil && *s.UniqueItems
	s.Delete("uniqueItems")
	if unique {
		return []string{"no item twice"}
	}
	return nil
}

// notInWords moves a string's reserved values out of s, as the words a
// model reads (notWords); any other not stays, and the strict modes refuse
// it.
func notInWords(s *schemamodel.Schema) []string {
	words, ok := notWords(s.Not)
	if !ok {
		return nil
	}
	s.Delete("not")
	return []string{words}
}

// notWords says not over an enum or a const (a string's reserved values,
// the one not generated code checks) in words: never "admin" or "root";
// false for any other.
func notWords(n *schemamodel.Schema) (string, bool) {
	if n == nil || len(n.Keywords()) != 1 {
		return "", false
	}
	values := n.Enum
	if n.Const != nil {
		values = []any{*n.Const}
	}
	if len(values) == 0 {
		return "", false
	}
	quoted := make([]string, len(values))
	for i, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return "", false
		}
		quoted[i] = string(b)
	}
	return "never " + strings.Join(quoted, " or "), true
}

// alternativesInWords moves oneOf and anyOf out of s when each alternative
// is a set of required members (keel's "this member or that one"), as the
// words a model reads: "give exactly one of: uid; name; org and slug".
// Other alternatives stay where they are.
func alternativesInWords(s *schemamodel.Schema) []string {
	var notes []string
	for _, kw := range []string{"oneOf", "anyOf"} {
		if words, ok := alternativeWords(kw, alternatives(s, kw)); ok {
			notes = append(notes, words)
			s.Delete(kw)
		}
	}
	return notes
}

// alternativeWords says alts, s's oneOf or anyOf (kw), in words, when they
// are sets of required members: false for any other alternatives.
func alternativeWords(kw string, alts []*schemamodel.Schema) (string, bool) {
	sets, ok := schemamodel.RequiredSets(alts)
	if !ok {
		return "", false
	}
	need := map[string]string{"oneOf": "give exactly one of: ", "anyOf": "give at least one of: "}[kw]
	return need + schemamodel.RequiredSetsInWords(sets), true
}

// alternatives is s's oneOf or anyOf (kw).
func alternatives(s *schemamodel.Schema, kw string) []*schemamodel.Schema {
	if kw == "oneOf" {
		return s.OneOf
	}
	return s.AnyOf
}

// dependentsInWords moves dependentRequired out of s, as the words a model
// reads: "to needs from".
func dependentsInWords(s *schemamodel.Schema) []string {
	raw, ok := s.OtherValue("dependentRequired")
	var deps map[string][]string
	if !ok || json.Unmarshal(raw, &deps) != nil {
		return nil // absent, or malformed: left for the refusal
	}
	s.Delete("dependentRequired")
	var notes []string
	for _, name := range slices.Sorted(maps.Keys(deps)) {
		if len(deps[name]) > 0 {
			notes = append(notes, name+" needs "+strings.Join(deps[name], " and "))
		}
	}
	return notes
}

// textBoundsInWords moves the bounds of a value written as text
// (formatMinimum, ...: a duration's, a decimal's) out of s, as the words a
// model reads: "at least 1m", "less than 1e6".
func textBoundsInWords(s *schemamodel.Schema) []string {
	var notes []string
	for _, b := range []struct{ kw, words string }{
		{"formatMinimum", "at least "}, {"formatExclusiveMinimum", "more than "},
		{"formatMaximum", "at most "}, {"formatExclusiveMaximum", "less than "},
	} {
		raw, ok := s.OtherValue(b.kw)
		var v string
		if !ok || json.Unmarshal(raw, &v) != nil {
			continue // absent, or not a string: left for the refusal
		}
		s.Delete(b.kw)
		notes = append(notes, b.words+v)
	}
	return notes
}

// contentInWords moves contentEncoding and contentMediaType out of s, as
// the words a model reads.
func contentInWords(s *schemamodel.Schema) []string {
	var notes []string
	for _, c := range []struct {
		kw string
		v  *string
	}{{"contentEncoding", &s.ContentEncoding}, {"contentMediaType", &s.ContentMediaType}} {
		if *c.v != "" {
			notes = append(notes, c.kw+": "+*c.v)
			s.Delete(c.kw)
		}
	}
	return notes
}

// describe moves the keywords strict mode does not accept, but a model can
// read as words, into the member's description ("at most 200 characters"),
// so the tool stays strict; the executor still enforces them, on the
// schema as generated.
func describe(s *schemamodel.Schema) {
	notes := slices.Concat(alternativesInWords(s), dependentsInWords(s), textBoundsInWords(s), notInWords(s))
	for _, kw := range openAIWords {
		if v := moveToWords(s, kw); v != "" {
			notes = append(notes, schemamodel.Said(kw, v))
		}
	}
	notes = append(notes, uniqueInWords(s)...)
	if f := s.Format; f != "" && !strictFormats[f] {
		s.Delete("format")
		notes = append(notes, "format: "+f)
	}
	notes = append(notes, contentInWords(s)...)
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
	schema, _, err := inlineRefs(schema)
	if err != nil {
		return nil, nil, []string{"the schema is not a JSON object"}
	}
	doc, err := schemamodel.Parse(schema)
	if err != nil || !doc.IsObject() {
		return nil, nil, []string{"the schema is not a JSON object"}
	}
	nulls = &NullShape{}
	problems = strictify(doc, "", nulls)
	if len(problems) > 0 {
		return nil, nil, problems
	}
	out, err = doc.MarshalJSON() // in the author's property order, which the model generates in
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
func strictNode(s *schemamodel.Schema, mode string, refused []string, describe func(*schemamodel.Schema), at func(string, ...any)) {
	describe(s)
	for _, kw := range refused {
		if s.Has(kw) {
			at("keyword %q is not supported in %s", kw, mode)
		}
	}
	if s.Type == nil && s.Enum == nil && s.Const == nil && s.AnyOf == nil {
		at("a value of any type cannot be expressed in %s", mode)
	}
	if s.Properties == nil && !s.Type.Is("object") {
		return
	}
	switch ap := s.AdditionalProperties; {
	case ap == nil:
		s.AdditionalProperties = schemamodel.False()
	case ap.IsTrue():
		at("additionalProperties must be false in %s", mode)
	case !ap.IsFalse():
		at("a map (additionalProperties with a schema) cannot be expressed in %s", mode)
	}
}

func strictify(s *schemamodel.Schema, path string, nulls *NullShape) []string {
	var problems []string
	at := problemAt(&problems, path)
	strictNode(s, "strict mode", refused, describe, at)
	if s.Properties != nil || s.Type.Is("object") {
		required := []string{}
		for _, name := range slices.Sorted(slices.Values(s.PropertyNames())) {
			sub := s.Property(name)
			if !sub.IsObject() {
				at("property %q has no schema", name)
				continue
			}
			if !s.IsRequired(name) && (sub.Type.Has("null") || slices.Contains(sub.Enum, nil)) {
				// Strict mode requires every member and says "absent" with a
				// null, which this member's null already means otherwise.
				at("property %q is optional and its null means something of its own (a wire.Nullable), which strict mode cannot tell apart from absent", name)
				continue
			}
			problems = append(problems, strictify(sub, join(path, name), nulls.member(name))...)
			if !s.IsRequired(name) {
				nulls.optional(name)
				nullable(sub)
			}
			required = append(required, name)
		}
		if s.Properties != nil {
			s.Required = required
		}
	}
	itemsAndAlternatives(s, path, func(sub *schemamodel.Schema, path string, alternative bool) {
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
func itemsAndAlternatives(s *schemamodel.Schema, path string, fn func(sub *schemamodel.Schema, path string, alternative bool)) {
	if s.Items.IsObject() {
		fn(s.Items, path+"[]", false)
	}
	for i, alt := range s.AnyOf {
		if alt.IsObject() {
			fn(alt, fmt.Sprintf("%s|%d", path, i), true)
		}
	}
}

// nullable lets a property be null: ["T", "null"] and null in its enum, or
// a null alternative in its anyOf, or else (a const) an anyOf of the value
// and null.
func nullable(s *schemamodel.Schema) {
	null := &schemamodel.Schema{Type: schemamodel.Types{"null"}}
	switch {
	case s.AnyOf != nil && s.Type == nil:
		if !slices.ContainsFunc(s.AnyOf, func(alt *schemamodel.Schema) bool { return alt.Type.Is("null") }) {
			s.AnyOf = append(s.AnyOf, null)
		}
		return
	case s.Type != nil:
		if !s.Type.Has("null") {
			s.Type = append(s.Type, "null")
		}
	case s.Const != nil:
		alt := s.Clone()
		alt.Delete("description")
		for _, kw := range s.Keywords() {
			if kw != "description" {
				s.Delete(kw)
			}
		}
		s.AnyOf = []*schemamodel.Schema{alt, null}
		return
	}
	if s.Enum != nil && !slices.Contains(s.Enum, nil) {
		s.Enum = append(s.Enum, nil)
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
// the size, with the executor's caps (runtime.Limits' MaxArgumentBytes and
// MaxDepth) applied first. Arguments over the caps,
// or that do not parse strictly (duplicates, invalid UTF-8, trailing data),
// and arguments with nothing to drop are returned untouched, so the
// executor's verdict on them stands.
func (n *NullShape) Drop(args json.RawMessage, maxBytes, maxDepth int) json.RawMessage {
	if n == nil || len(args) > maxBytes {
		return args
	}
	var out bytes.Buffer
	w := nullDropper{dec: jsontext.NewDecoder(bytes.NewReader(args)), enc: jsontext.NewEncoder(&out), maxDepth: maxDepth}
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
