package render

import (
	"fmt"
	"go/types"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/keelgen/keel/cmd/keelgen/internal/gocode"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

func (g *codecs) writeLeaf(f *codecFunc, t types.Type, n node, ptr, hint string) {
	k := f.kind
	switch k {
	case kString:
		_, f.plain = types.Unalias(t).(*types.Basic)
		f.checks = g.stringChecks(n, ptr, hint)
	case kBool:
		f.checks = boolChecks(n)
	case kInt, kUint:
		f.checks = intChecks(n, t, k)
	case kFloat:
		f.bits = bits(t)
		b, basic := types.Unalias(t).(*types.Basic)
		f.plain = basic && b.Kind() == types.Float64
		f.checks = g.floatChecks(n, f.bits, ptr)
	case kBytes, kDuration, kText:
		f.checks = g.stringChecks(n, ptr, hint)
		if k == kDuration || k == kText {
			f.checks = append(f.checks, g.textBounds(n, k, ptr)...)
		}
	case kTime:
		g.onlyKeywords(n, ptr, "date-time", "type", "format")
	case kRaw, kAny, kMarshaler:
		g.onlyKeywords(n, ptr, "", "")
	}
}

func (g *codecs) writePointer(f *codecFunc, t types.Type, n node, ptr, hint string) {
	elem := types.Unalias(t).Underlying().(*types.Pointer).Elem()
	f.elem, f.null = g.writer(elem, withoutNull(n), ptr, hint), nullable(n)
}

func (g *codecs) writeNullable(f *codecFunc, t types.Type, n node, ptr, hint string) {
	elem, _ := model.NullableElem(t)
	g.nullableTakesNull(n, ptr)
	f.elem, f.elemType, f.null = g.writer(elem, withoutNull(n), ptr, hint+"Value"), typeCode(elem), true
}

func (g *codecs) writeSlice(f *codecFunc, t types.Type, n node, ptr, hint string) {
	g.checkContainer(n, kSlice, t, ptr)
	elem := types.Unalias(t).Underlying().(*types.Slice).Elem()
	f.nested = gocode.ContainsItself(t)
	f.elem = g.writer(elem, g.itemsNode(n, ptr), ptr+"/0", hint+"Item")
	f.counts = countChecks(n, "minItems", "maxItems")
	f.unique = g.uniqueCheck(n, elem, ptr)
}

func (g *codecs) writeArray(f *codecFunc, t types.Type, n node, ptr, hint string) {
	arr := types.Unalias(t).Underlying().(*types.Array)
	g.arrayLength(n, arr.Len(), ptr)
	f.nested = gocode.ContainsItself(t)
	f.elem = g.writer(arr.Elem(), g.itemsNode(n, ptr), ptr+"/0", hint+"Item")
	f.unique = g.uniqueCheck(n, arr.Elem(), ptr)
}

func (g *codecs) writeTuple(f *codecFunc, t types.Type, n node, ptr, hint string) {
	fields, items := g.tupleItems(t, n, ptr)
	f.nested = gocode.ContainsItself(t)
	for i, fd := range fields {
		f.members = append(f.members, memberPlan{json: fd.json, access: fd.access,
			fn: g.atField(fd).writer(fd.typ, items[i], ptr+"/"+strconv.Itoa(i), hint+fieldHint(fd))})
	}
}

func (g *codecs) writeMap(f *codecFunc, t types.Type, n node, ptr, hint string) {
	g.checkContainer(n, kMap, t, ptr)
	m := types.Unalias(t).Underlying().(*types.Map)
	f.nested = gocode.ContainsItself(t)
	f.elem = g.writer(m.Elem(), g.valuesNode(n, ptr), ptr+"/*", hint+"Value")
	f.counts = countChecks(n, "minProperties", "maxProperties")
}

// writeStruct plans the writing of a struct's members, with json v2's
// omitempty and omitzero: a value it would omit is not checked, since the
// schema never sees it.
func (g *codecs) writeStruct(f *codecFunc, t types.Type, n node, ptr, hint string) {
	f.nested = gocode.ContainsItself(t)
	fields, nodes, required := g.members(t, n, ptr)
	for i, fd := range fields {
		sub := ptrTo(ptr, fd.json)
		m := memberPlan{json: fd.json, access: fd.access, required: required[fd.json], omitEmpty: fd.omitEmpty, omitZero: fd.omitZero}
		at := g.atField(fd)
		m.fn = at.writer(fd.typ, nodes[i], sub, hint+fieldHint(fd))
		if fd.omitEmpty && !fd.omitZero && g.side == "output" { // arguments read alike under json v1 and v2
			at.omitEmptyUnderV2(fd, nodes[i], sub)
		}
		if fd.omitZero {
			m.zero, m.zeroType = g.zeroTest(fd.typ, sub)
		}
		if fd.omitEmpty {
			m.empty = emptyTestOf(fd.typ)
		}
		f.members = append(f.members, m)
	}
}

// omitEmptyUnderV2 warns where a result member's omitempty does what json
// v1's did not: a zero number or false is written (v1 left it out), an
// object that writes as {} is left out (v1 wrote it). The warning gives
// the omitzero tag that keeps v1's meaning for a number or bool.
func (g *codecs) omitEmptyUnderV2(fd field, n node, ptr string) {
	edit := fmt.Sprintf("json:%q", strings.Replace(fd.tag, "omitempty", "omitzero", 1))
	switch k, _ := classify(fd.typ, g.pkg.TextTypes); k {
	case kInt, kUint, kFloat, kBool:
		zero := map[bool]string{true: "false", false: "0"}[k == kBool]
		if kw := zeroBreaks(n, k); kw != "" {
			g.warn(ptr, "omitempty does not omit a zero %s under json v2, and a zero breaks its %s: a zero result is invalid_tool_output; use omitzero (`%s`)",
				jsonTypeOf[k], kw, edit)
			return
		}
		g.warn(ptr, "omitempty does not omit a zero %s under json v2 (keel's writer follows it): %s is written where json v1 left the member out; to leave it out, use omitzero (`%s`)",
			jsonTypeOf[k], zero, edit)
	case kStruct:
		g.warn(ptr, "omitempty leaves an object out under json v2 (keel's writer follows it) when it writes as {}, where json v1 always wrote it; "+
			"to leave out only its zero value, use omitzero (`%s`); to always write it, drop omitempty", edit)
	}
}

// emptyTestOf is how an omitempty member of type t is known not to be a
// value json v2 omits without writing it: a non-empty string, slice or
// map, a non-nil pointer to a non-empty string; unknown when only writing
// tells.
func emptyTestOf(t types.Type) emptyTest {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		if u.Info()&types.IsString != 0 {
			return emptyString
		}
	case *types.Slice, *types.Map:
		if k, _ := classify(t, nil); k == kRaw { // no text type is raw
			return emptyUnknown
		}
		return emptyLen
	case *types.Pointer:
		if b, ok := u.Elem().Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
			return emptyPtrString
		}
		return emptyPointer
	}
	return emptyUnknown
}

// zeroTest is how an omitzero member of type t is known to be non-zero:
// its IsZero method, or a comparison with its zero value.
func (g *codecs) zeroTest(t types.Type, ptr string) (zeroTest, jen.Code) {
	if model.HasMethod(t, "IsZero") {
		return zeroIsZero, nil
	}
	switch u := t.Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Map, *types.Interface:
		return zeroNil, nil
	case *types.Basic:
		switch {
		case u.Info()&types.IsString != 0:
			return zeroString, nil
		case u.Info()&types.IsBoolean != 0:
			return zeroBool, nil
		default:
			return zeroNumber, nil
		}
	}
	if !types.Comparable(t) {
		g.fail(ptr, "omitzero on a value that is neither comparable nor has an IsZero method cannot be written by generated code")
	}
	return zeroComposite, typeCode(t)
}
