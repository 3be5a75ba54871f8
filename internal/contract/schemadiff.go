package contract

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"

	"github.com/keelgen/keel/internal/schemajson"
)

// schemaDiff walks an old and a new schema side by side and names each
// change with the level it needs. For the input, the model is the caller:
// anything it could send before and cannot now is major. For the output,
// the caller reads: anything it could rely on before and cannot now is
// major.
type schemaDiff struct {
	part  string // "input" or "output"
	items []Item
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
var handled = map[string]bool{"type": true, "enum": true, "properties": true, "required": true, "items": true, "additionalProperties": true}

var annotations = map[string]bool{"description": true, "title": true, "examples": true, "default": true, "$comment": true}

func (d *schemaDiff) compare(old, new map[string]any, path string) {
	d.compareType(old, new, path)
	d.compareEnum(old, new, path)
	d.compareProperties(old, new, path)
	for _, kw := range []string{"items", "additionalProperties"} {
		o, oOK := old[kw].(map[string]any)
		n, nOK := new[kw].(map[string]any)
		switch {
		case oOK && nOK:
			suffix := "[]"
			if kw == "additionalProperties" {
				suffix = "{}"
			}
			d.compare(o, n, path+suffix)
		case !reflect.DeepEqual(old[kw], new[kw]):
			d.add(d.pick(Major, Minor), "%s of %s changed from %s to %s", kw, where(d.part, path), show(old[kw]), show(new[kw]))
		}
	}
	var keys []string
	for k := range union(old, new) {
		if !handled[k] && !reflect.DeepEqual(old[k], new[k]) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if annotations[k] {
			d.add(Patch, "%s of %s changed", k, where(d.part, path))
			continue
		}
		// A changed constraint may narrow what the model can send: major for input.
		d.add(d.pick(Major, Minor), "%s of %s changed from %s to %s", k, where(d.part, path), show(old[k]), show(new[k]))
	}
}

func (d *schemaDiff) compareType(old, new map[string]any, path string) {
	ot, nt := schemajson.Strings(old["type"]), schemajson.Strings(new["type"])
	if reflect.DeepEqual(ot, nt) {
		return
	}
	widened, narrowed := contains(nt, ot), contains(ot, nt)
	level := Major
	if (d.part == "input" && widened) || (d.part == "output" && narrowed) {
		level = Minor
	}
	d.add(level, "type of %s changed from %s to %s", where(d.part, path), show(old["type"]), show(new["type"]))
}

func (d *schemaDiff) compareEnum(old, new map[string]any, path string) {
	oe, oOK := old["enum"].([]any)
	ne, nOK := new["enum"].([]any)
	switch {
	case !oOK && !nOK:
	case !oOK:
		d.add(d.pick(Major, Minor), "%s now restricted to %s", where(d.part, path), show(ne))
	case !nOK:
		d.add(d.pick(Minor, Major), "%s no longer restricted to %s", where(d.part, path), show(oe))
	default:
		for _, v := range missing(oe, ne) {
			d.add(d.pick(Minor, Major), "enum value %s added to %s", show(v), where(d.part, path))
		}
		for _, v := range missing(ne, oe) {
			d.add(d.pick(Major, Minor), "enum value %s removed from %s", show(v), where(d.part, path))
		}
	}
}

func (d *schemaDiff) compareProperties(old, new map[string]any, path string) {
	op, _ := old["properties"].(map[string]any)
	np, _ := new["properties"].(map[string]any)
	oreq, nreq := schemajson.Strings(old["required"]), schemajson.Strings(new["required"])
	for _, name := range slices.Sorted(maps.Keys(union(op, np))) {
		field := fmt.Sprintf("field %q", join(path, name))
		o, inOld := op[name].(map[string]any)
		n, inNew := np[name].(map[string]any)
		switch {
		case !inOld && d.part == "output":
			d.add(Minor, "%s added", field)
		case !inOld && nreq[name]:
			d.add(Major, "%s added, required", field)
		case !inOld:
			d.add(Minor, "%s added (optional)", field)
		case !inNew:
			d.add(Major, "%s removed", field)
		default:
			switch {
			case nreq[name] && !oreq[name]:
				d.add(d.pick(Major, Minor), "%s now required", field)
			case oreq[name] && !nreq[name]:
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

func show(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func union(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// stringSet reads "string" or ["string","null"] as a set.

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
		found := false
		for _, w := range a {
			if reflect.DeepEqual(v, w) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, v)
		}
	}
	return out
}
