package contract

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/schemamodel"
)

// schemaDiff walks an old and a new schema side by side and names each
// change with the level it needs. For the input, the model is the caller:
// anything it could send before and cannot now is major. For the output,
// the caller reads: anything it could rely on before and cannot now is
// major.
type schemaDiff struct {
	part  string // "input" or "output"
	items []Item
	// The roots' $defs, which a $ref names: a recursive type, compared once
	// by its name wherever it is used.
	oldDefs, newDefs schemamodel.Defs
	compared         map[string]bool
}

// newSchemaDiff compares the schemas of one side of a tool.
func newSchemaDiff(part string, old, new *schemamodel.Schema) *schemaDiff {
	return &schemaDiff{part: part, oldDefs: schemamodel.DefsOf(old), newDefs: schemamodel.DefsOf(new), compared: map[string]bool{}}
}

func (d *schemaDiff) add(level Level, format string, args ...any) {
	d.items = append(d.items, Item{d.part, fmt.Sprintf(format, args...), level})
}

// pick returns a when this is the input side, b for the output side.
func (d *schemaDiff) pick(in, out Level) Level {
	if d.part == "input" {
		return in
	}
	return out
}

// handled keywords are compared structurally; others are constraints or
// annotations.
var handled = map[string]bool{"type": true, "enum": true, "properties": true, "required": true, "items": true, "additionalProperties": true,
	"$ref": true, "$defs": true, "$schema": true}

func (d *schemaDiff) compare(old, new *schemamodel.Schema, path string) {
	if d.compareRefs(old, new, path) {
		return
	}
	d.compareType(old, new, path)
	d.compareEnum(old, new, path)
	d.compareProperties(old, new, path)
	for _, sub := range []struct {
		kw, suffix string
		old, new   *schemamodel.Schema
	}{{"items", "[]", old.Items, new.Items}, {"additionalProperties", "{}", old.AdditionalProperties, new.AdditionalProperties}} {
		switch {
		case sub.old.IsObject() && sub.new.IsObject():
			d.compare(sub.old, sub.new, path+sub.suffix)
		case !sameJSON(old.Keyword(sub.kw), new.Keyword(sub.kw)):
			d.add(d.pick(Major, Minor), "%s of %s changed from %s to %s", sub.kw, where(d.part, path), show(old.Keyword(sub.kw)), show(new.Keyword(sub.kw)))
		}
	}
	alternatives := d.compareAlternatives(old, new, path)
	var keys []string
	for _, k := range slices.Concat(old.Keywords(), new.Keywords()) {
		if !handled[k] && !alternatives[k] && !slices.Contains(keys, k) && !sameJSON(old.Keyword(k), new.Keyword(k)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if schemamodel.RuleOf(k).Patch {
			d.add(Patch, "%s of %s changed", k, where(d.part, path))
			continue
		}
		if k == "writeOnly" {
			d.compareSensitive(old, new, path)
			continue
		}
		if k == schemamodel.Untrusted {
			d.compareUntrusted(old, new, path)
			continue
		}
		// A changed constraint may narrow what the model can send: major for input.
		d.add(d.pick(Major, Minor), "%s of %s changed from %s to %s", k, where(d.part, path), show(old.Keyword(k)), show(new.Keyword(k)))
	}
}

// compareSensitive grades writeOnly, a member's mark as sensitive (its
// value never shown to a person approving, nor logged): on the arguments,
// a mark dropped lets the value be shown, major; one added hides more,
// minor. On the result it changes nothing keel does.
func (d *schemaDiff) compareSensitive(old, new *schemamodel.Schema, path string) {
	was, is := string(old.Keyword("writeOnly")) == "true", string(new.Keyword("writeOnly")) == "true"
	switch {
	case d.part != "input":
		d.add(Patch, "writeOnly of %s changed", where(d.part, path))
	case was && !is:
		d.add(Major, "%s is no longer sensitive (writeOnly): a person approving a call now reads its value", where(d.part, path))
	case is && !was:
		d.add(Minor, "%s is now sensitive (writeOnly): a person approving a call reads only that it is set", where(d.part, path))
	}
}

// compareUntrusted grades x-keel-untrusted, a result member's mark as text
// from outside: a mark dropped stops telling the model that text is data,
// not instructions, and stops tainting the conversation, major; one added
// tells it more, minor.
func (d *schemaDiff) compareUntrusted(old, new *schemamodel.Schema, path string) {
	switch was, is := schemamodel.IsUntrusted(old), schemamodel.IsUntrusted(new); {
	case was && !is:
		d.add(Major, "%s is no longer marked untrusted: the model is no longer told its text is data, not instructions", where(d.part, path))
	case is && !was:
		d.add(Minor, "%s is now marked untrusted: the model is told its text is data, not instructions", where(d.part, path))
	}
}

// compareAlternatives compares oneOf and anyOf where each side is absent
// or alternatives of required members, in the words a reviewer reads, and
// returns the keywords it compared. On the arguments, a rule added or
// changed may refuse a call that passed: major; one dropped: minor.
func (d *schemaDiff) compareAlternatives(old, new *schemamodel.Schema, path string) map[string]bool {
	done := map[string]bool{}
	for _, c := range []struct {
		kw, need string
		old, new []*schemamodel.Schema
	}{{"oneOf", "exactly one of", old.OneOf, new.OneOf}, {"anyOf", "at least one of", old.AnyOf, new.AnyOf}} {
		oldSets, oldOK := schemamodel.RequiredSets(c.old)
		newSets, newOK := schemamodel.RequiredSets(c.new)
		if (!oldOK && c.old != nil) || (!newOK && c.new != nil) {
			continue // other alternatives: compared as a constraint
		}
		done[c.kw] = true
		switch o, n := schemamodel.RequiredSetsInWords(oldSets), schemamodel.RequiredSetsInWords(newSets); {
		case o == n:
		case o == "":
			d.add(d.pick(Major, Minor), "%s must now give %s: %s", where(d.part, path), c.need, n)
		case n == "":
			d.add(d.pick(Minor, Major), "%s need no longer give %s: %s", where(d.part, path), c.need, o)
		default:
			d.add(Major, "%s must give %s: %s (was: %s)", where(d.part, path), c.need, n, o)
		}
	}
	return done
}

// compareRefs compares a use of a recursive type: the same type's schema,
// once, under its name; a type changed for another is major. It reports
// whether it compared (either side a $ref), the uses' own keywords too.
func (d *schemaDiff) compareRefs(old, new *schemamodel.Schema, path string) bool {
	oref, oIs := schemamodel.Ref(old)
	nref, nIs := schemamodel.Ref(new)
	if !oIs && !nIs {
		return false
	}
	od, nd := d.oldDefs.Get(oref), d.newDefs.Get(nref)
	switch {
	case oIs && nIs && oref == nref && od != nil && nd != nil:
		if !d.compared[oref] {
			d.compared[oref] = true
			d.compare(od, nd, "$defs/"+oref)
		}
	default:
		d.add(Major, "%s changed from %s to %s", where(d.part, path), refShown(old, oref, oIs), refShown(new, nref, nIs))
	}
	for _, k := range slices.Concat(old.Keywords(), new.Keywords()) {
		if schemamodel.RuleOf(k).Patch && !sameJSON(old.Keyword(k), new.Keyword(k)) {
			d.add(Patch, "%s of %s changed", k, where(d.part, path))
			return true
		}
	}
	return true
}

// refShown names what a schema is for a reviewer: a recursive type by its
// name, else the schema.
func refShown(s *schemamodel.Schema, name string, isRef bool) string {
	if isRef {
		return "the recursive type " + name
	}
	b, _ := s.MarshalJSON()
	return string(b)
}

func (d *schemaDiff) compareType(old, new *schemamodel.Schema, path string) {
	ot, nt := set(old.Type), set(new.Type)
	if maps.Equal(ot, nt) {
		return
	}
	widened, narrowed := contains(nt, ot), contains(ot, nt)
	level := Major
	if (d.part == "input" && widened) || (d.part == "output" && narrowed) {
		level = Minor
	}
	d.add(level, "type of %s changed from %s to %s", where(d.part, path), show(old.Keyword("type")), show(new.Keyword("type")))
}

func (d *schemaDiff) compareEnum(old, new *schemamodel.Schema, path string) {
	oe, ne := old.Enum, new.Enum
	switch {
	case oe == nil && ne == nil:
	case oe == nil:
		d.add(d.pick(Major, Minor), "%s now restricted to %s", where(d.part, path), show(new.Keyword("enum")))
	case ne == nil:
		d.add(d.pick(Minor, Major), "%s no longer restricted to %s", where(d.part, path), show(old.Keyword("enum")))
	default:
		for _, v := range missing(oe, ne) {
			d.add(d.pick(Minor, Major), "enum value %s added to %s", showValue(v), where(d.part, path))
		}
		for _, v := range missing(ne, oe) {
			d.add(d.pick(Major, Minor), "enum value %s removed from %s", showValue(v), where(d.part, path))
		}
	}
}

func (d *schemaDiff) compareProperties(old, new *schemamodel.Schema, path string) {
	names := slices.Concat(old.PropertyNames(), new.PropertyNames())
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		field := fmt.Sprintf("field %q", join(path, name))
		o, n := old.Property(name), new.Property(name)
		inOld, inNew := o.IsObject(), n.IsObject()
		oreq, nreq := old.IsRequired(name), new.IsRequired(name)
		switch {
		case !inOld && d.part == "output":
			d.add(Minor, "%s added", field)
		case !inOld && nreq:
			d.add(Major, "%s added, required", field)
		case !inOld:
			d.add(Minor, "%s added (optional)", field)
		case !inNew:
			d.add(Major, "%s removed", field)
		default:
			switch {
			case nreq && !oreq:
				d.add(d.pick(Major, Minor), "%s now required", field)
			case oreq && !nreq:
				d.add(d.pick(Minor, Major), "%s now optional", field)
			}
			d.compare(o, n, join(path, name))
		}
	}
}

// where names a place in a schema for a reviewer.
func where(part, path string) string {
	if path == "" {
		if part == "input" {
			return "the arguments"
		}
		return "the result"
	}
	return fmt.Sprintf("%q", path)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// show is a keyword's value for a reviewer; "nothing" when absent.
func show(v jsontext.Value) string {
	if v == nil {
		return "nothing"
	}
	return string(v)
}

func showValue(v any) string {
	b, _ := schemamodel.EncodeValue(v)
	return string(b)
}

// sameJSON reports whether two values are one JSON value, however spelled
// (member order, number form); absent equals only absent.
func sameJSON(a, b jsontext.Value) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	a, b = a.Clone(), b.Clone()
	return a.Canonicalize() == nil && b.Canonicalize() == nil && bytes.Equal(a, b)
}

func set(types schemamodel.Types) map[string]bool {
	out := map[string]bool{}
	for _, t := range types {
		out[t] = true
	}
	return out
}

// contains reports whether a ⊇ b. An absent type means any type.
func contains(a, b map[string]bool) bool {
	if len(a) == 0 {
		return true
	}
	if len(b) == 0 {
		return false
	}
	for k := range b {
		if !a[k] && !(k == "integer" && a["number"]) {
			return false
		}
	}
	return true
}

// missing lists the values of b that are not in a.
func missing(a, b []any) []any {
	var out []any
	for _, v := range b {
		if !slices.ContainsFunc(a, func(w any) bool { return sameValue(v, w) }) {
			out = append(out, v)
		}
	}
	return out
}

func sameValue(a, b any) bool {
	x, errA := schemamodel.EncodeValue(a)
	y, errB := schemamodel.EncodeValue(b)
	return errA == nil && errB == nil && sameJSON(x, y)
}
