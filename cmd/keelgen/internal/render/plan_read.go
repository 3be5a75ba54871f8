package render

import (
	"encoding/json"
	"fmt"
	"go/types"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/keelgen/keel/cmd/keelgen/internal/gocode"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/schemamodel"
)

// argsKey tells emitted argument structs apart; two that are one type (an
// alias) share a reader.
func (g *codecs) argsKey(t types.Type) string {
	if e, emitted := t.(emittedArgs); emitted {
		return gocode.ArgsKey(e.tool)
	}
	return ""
}

func (g *codecs) readLeaf(f *codecFunc, t types.Type, n node, ptr, hint string) {
	k := f.kind
	switch k {
	case kString, kDuration, kBytes, kText:
		f.checks = g.stringChecks(n, ptr, hint)
		f.bound = textBound(k, f.checks)
		if k == kDuration || k == kText {
			f.checks = append(f.checks, g.textBounds(n, k, ptr)...)
		}
		if k == kText {
			f.parse = textParsers[qualifiedName(t)]
		}
	case kBool:
		f.checks = boolChecks(n)
	case kInt, kUint:
		f.bits = bits(t)
		b := t.Underlying().(*types.Basic)
		f.intLen = b.Kind() == types.Int || b.Kind() == types.Uint
		f.checks = intChecks(n, t, k)
	case kFloat:
		f.bits = bits(t)
		f.checks = g.floatChecks(n, f.bits, ptr)
	case kTime:
		g.onlyKeywords(n, ptr, "date-time", "type", "format")
	case kRaw:
		g.onlyKeywords(n, ptr, "", "")
	case kAny:
		g.fail(ptr, "an open value (any) is allowed in a result only: a model's arguments are members the schema declares")
	}
	f.conv = g.convType(t)
}

// textBound is the wire constant bounding a text that goes to a parser keel
// does not own (a type's UnmarshalText, time.ParseDuration), unless the
// member's maxLength bounds it; base64 and plain strings keel reads itself,
// in linear time.
func textBound(k kind, checks []check) string {
	for _, c := range checks {
		if c.keyword == "maxLength" {
			return ""
		}
	}
	return map[kind]string{kText: "MaxText", kDuration: "MaxDuration"}[k]
}

// qualifiedName is "pkgpath.Name" of a named type, else "".
func qualifiedName(t types.Type) string {
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil {
		return n.Obj().Pkg().Path() + "." + n.Obj().Name()
	}
	return ""
}

// textParsers read the standard library's text types that keel checks
// beyond their UnmarshalText: netip reads "" as the zero value (no address
// at all) and takes any text as an IPv6 zone.
var textParsers = map[string]string{
	"net/netip.Addr":     "ParseAddr",
	"net/netip.Prefix":   "ParsePrefix",
	"net/netip.AddrPort": "ParseAddrPort",
}

// onlyKeywords refuses keywords other than allowed on a value whose JSON
// form a library type decides (time.Time, json.RawMessage).
func (g *codecs) onlyKeywords(n node, ptr, format string, allowed ...string) {
	for _, k := range n.Keywords() {
		if schemamodel.IsAnnotation(k) {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			g.fail(ptr, "keyword %q on this value cannot be checked by generated code", k)
		}
	}
	if f := n.Format; f != "" && f != format {
		g.fail(ptr, "format %q does not describe this value (it is %s)", f, format)
	}
}

// readStruct plans the reading of an object into a struct: each member
// once, no unknown member, every required member present.
func (g *codecs) readStruct(f *codecFunc, t types.Type, n node, ptr, hint string) {
	fields, nodes, required := g.members(t, n, ptr)
	// One presence flag per member, named after its field: a member added
	// or removed changes its own lines only.
	flags := seenFlags(fields)
	for i, fd := range fields {
		read := g.atField(fd).reader(fd.typ, nodes[i], ptrTo(ptr, fd.json), hint+fieldHint(fd))
		f.members = append(f.members, memberPlan{json: fd.json, access: fd.access, fn: read, required: required[fd.json], flag: flags[i],
			// Models send null for "unset"; for an optional member it means
			// absent (documented in docs/executor.md).
			nullAbsent: !required[fd.json] && !nullable(nodes[i])})
	}
	f.alternatives = g.alternatives(f.members, n, ptr)
	f.dependents = g.dependents(f.members, n, ptr)
}

// dependents plans a struct's dependentRequired: a member that, given,
// needs others given too ("to" needs "from"), in the order of its names.
func (g *codecs) dependents(members []memberPlan, n node, ptr string) []dependentPlan {
	raw, ok := n.OtherValue("dependentRequired")
	if !ok {
		return nil
	}
	var deps map[string][]string
	if err := json.Unmarshal(raw, &deps); err != nil {
		g.fail(ptr, "dependentRequired must map member names to lists of member names")
		return nil
	}
	flag := func(name string) (string, bool) {
		j := slices.IndexFunc(members, func(m memberPlan) bool { return m.json == name })
		if j < 0 {
			g.fail(ptr+"/dependentRequired", "member %q is no field", name)
			return "", false
		}
		members[j].given = true
		return members[j].flag, true
	}
	var out []dependentPlan
	for _, name := range slices.Sorted(maps.Keys(deps)) {
		d, ok := flag(name)
		if !ok {
			continue
		}
		p := dependentPlan{flag: d}
		for _, need := range deps[name] {
			if f, ok := flag(need); ok {
				p.needs = append(p.needs, f)
			}
		}
		if len(p.needs) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// alternatives plans a struct's oneOf and anyOf, which keel checks when
// each alternative is a set of required members and nothing else: "this
// member or that one" (the reflector writes them from oneof_required= and
// anyof_required= tags). A member counts as given when present and not
// null, since a null optional member is absent (docs/executor.md): so the
// check is the schema's, or stricter where a null stood for a member.
func (g *codecs) alternatives(members []memberPlan, n node, ptr string) []alternativesPlan {
	var out []alternativesPlan
	for _, kw := range []string{"oneOf", "anyOf"} {
		alts := n.OneOf
		if kw == "anyOf" {
			alts = n.AnyOf
		}
		if !n.Has(kw) {
			continue
		}
		plan := alternativesPlan{keyword: kw}
		for i, alt := range alts {
			at := fmt.Sprintf("%s/%s/%d", ptr, kw, i)
			for _, k := range alt.Keywords() {
				if k != "required" && !schemamodel.IsAnnotation(k) {
					g.fail(at, "keyword %q: generated code checks %s only as alternatives of required members, each {\"required\": [...]} and a title at most", k, kw)
				}
			}
			if len(alt.Required) == 0 {
				g.fail(at, "an alternative of %s names no required member, so every object meets it", kw)
			}
			var set []string
			for _, name := range alt.Required {
				j := slices.IndexFunc(members, func(m memberPlan) bool { return m.json == name })
				if j < 0 {
					g.fail(at, "required member %q is no field", name)
					continue
				}
				members[j].given = true
				set = append(set, members[j].flag)
			}
			plan.sets = append(plan.sets, set)
		}
		out = append(out, plan)
	}
	return out
}

func fieldHint(f field) string { return f.access[len(f.access)-1] }

// seenFlags names the presence flag of each field after its Go field (a
// promoted one after its path), unique within the struct.
func seenFlags(fields []field) []string {
	out := make([]string, len(fields))
	taken := map[string]bool{}
	for i, f := range fields {
		name := strings.Join(f.access, "")
		if taken[name] {
			name = strings.Join(f.access, "_")
		}
		taken[name] = true
		out[i] = name
	}
	return out
}

func (g *codecs) readPointer(f *codecFunc, t types.Type, n node, ptr, hint string) {
	elem := types.Unalias(t).Underlying().(*types.Pointer).Elem()
	f.elem = g.reader(elem, withoutNull(n), ptr, hint)
	f.elemType, f.null = typeCode(elem), nullable(n)
}

// readNullable plans a wire.Nullable's reader: null, or its value read
// against n less null.
func (g *codecs) readNullable(f *codecFunc, t types.Type, n node, ptr, hint string) {
	elem, _ := model.NullableElem(t)
	g.nullableTakesNull(n, ptr)
	f.elem, f.elemType, f.null = g.reader(elem, withoutNull(n), ptr, hint+"Value"), typeCode(elem), true
}

// nullableTakesNull reports a wire.Nullable whose schema refuses null: a
// JSONSchemaExtend method took it away.
func (g *codecs) nullableTakesNull(n node, ptr string) {
	if !n.Type.Has("null") {
		g.fail(ptr, "a wire.Nullable's schema takes null; its type is %s", typeList(n.Type))
	}
}

// withoutNull is n for the value behind a pointer: null is the pointer's.
func withoutNull(n node) node {
	if !n.Type.Has("null") {
		return n
	}
	out := n.Clone()
	out.Type = slices.Compact(slices.Sorted(slices.Values(n.Type.Without("null"))))
	return out
}

// checkContainer reports a schema type that does not describe a slice or
// map (null aside, which nil holds).
func (g *codecs) checkContainer(n node, k kind, t types.Type, ptr string) {
	g.checkType(withoutNull(n), k, t, ptr)
}

func (g *codecs) readSlice(f *codecFunc, t types.Type, n node, ptr, hint string) {
	g.checkContainer(n, kSlice, t, ptr)
	elem := types.Unalias(t).Underlying().(*types.Slice).Elem()
	f.elem = g.reader(elem, g.itemsNode(n, ptr), ptr+"/0", hint+"Item")
	f.elemType, f.null = typeCode(elem), nullable(n)
	f.counts = countChecks(n, "minItems", "maxItems")
	f.unique = g.uniqueCheck(n, elem, ptr)
}

func (g *codecs) readArray(f *codecFunc, t types.Type, n node, ptr, hint string) {
	arr := types.Unalias(t).Underlying().(*types.Array)
	g.arrayLength(n, arr.Len(), ptr)
	f.elem = g.reader(arr.Elem(), g.itemsNode(n, ptr), ptr+"/0", hint+"Item")
	f.elemType = typeCode(arr.Elem())
	f.unique = g.uniqueCheck(n, arr.Elem(), ptr)
}

// readTuple plans a //keel:tuple struct's reading: its fields' values, in
// order, from an array of exactly that many items.
func (g *codecs) readTuple(f *codecFunc, t types.Type, n node, ptr, hint string) {
	fields, items := g.tupleItems(t, n, ptr)
	for i, fd := range fields {
		f.members = append(f.members, memberPlan{json: fd.json, access: fd.access,
			fn: g.atField(fd).reader(fd.typ, items[i], ptr+"/"+strconv.Itoa(i), hint+fieldHint(fd))})
	}
}

// tupleItems pairs a tuple struct's fields with its prefixItems.
func (g *codecs) tupleItems(t types.Type, n node, ptr string) ([]field, []node) {
	fields := g.structFields(types.Unalias(t).Underlying().(*types.Struct), nil, ptr)
	raw, _ := n.OtherValue("prefixItems")
	var docs []json.RawMessage
	if err := json.Unmarshal(raw, &docs); err != nil || len(docs) != len(fields) {
		g.fail(ptr, "a //keel:tuple of %d fields needs prefixItems of %d schemas (a tuple inside a recursive type is not one)", len(fields), len(fields))
		return nil, nil
	}
	g.arrayLength(n, int64(len(fields)), ptr)
	items := make([]node, len(docs))
	for i, d := range docs {
		s, err := schemamodel.Parse(d)
		if err != nil {
			g.fail(ptr, "prefixItems/%d: %v", i, err)
			return nil, nil
		}
		items[i] = g.node(s)
	}
	return fields, items
}

// arrayLength refuses an array's schema unless it says what the array
// holds: exactly its length of items (the reflector writes minItems and
// maxItems so; a tag that changed either would make them disagree).
func (g *codecs) arrayLength(n node, length int64, ptr string) {
	for _, kw := range []string{"minItems", "maxItems"} {
		if v, ok := num(n, kw); !ok || int64(intOf(v)) != length {
			g.fail(ptr, "an array of %d items needs minItems and maxItems %d in its schema (the reflector writes them; leave them out of its tag)", length, length)
			return
		}
	}
}

func (g *codecs) readMap(f *codecFunc, t types.Type, n node, ptr, hint string) {
	g.checkContainer(n, kMap, t, ptr)
	for _, k := range []string{"properties", "required"} {
		if n.Has(k) {
			g.fail(ptr, "keyword %q on a map cannot be checked by generated code; use a struct", k)
		}
	}
	m := types.Unalias(t).Underlying().(*types.Map)
	f.elem = g.reader(m.Elem(), g.valuesNode(n, ptr), ptr+"/*", hint+"Value")
	f.elemType, f.keyConv, f.null = typeCode(m.Elem()), g.convType(m.Key()), nullable(n)
	f.counts = countChecks(n, "minProperties", "maxProperties")
}
