package conformance_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/keelgen/keel/example"
	examplegen "github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/internal/testing/conformance"
	"github.com/keelgen/keel/internal/testing/conformance/generated"
	"github.com/keelgen/keel/internal/toolrules"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/wire"
)

// oracleTool is one generated tool with what the differential test compares
// it with: its schemas compiled by the JSON Schema validator, and json v2
// decoding into the same Go argument type.
type oracleTool struct {
	exec          *runtime.Executor
	name          string
	input, output *jsonschema.Schema
	inputDoc      any
	// goValue decodes args with json v2 into the tool's argument type and
	// encodes the value again, as the handler's echo would be.
	goValue func(args []byte) ([]byte, error)
}

var strict = jsonv2.JoinOptions(jsonv2.RejectUnknownMembers(true), jsonv2.MatchCaseInsensitiveNames(false),
	jsonv2.Deterministic(true))

func echo[A any](args []byte) ([]byte, error) {
	var a A
	if err := jsonv2.Unmarshal(args, &a, strict); err != nil {
		return nil, err
	}
	return jsonv2.Marshal(a, strict)
}

// echoData is the echo of arguments whose members are unions, which json
// v2 reads only as data: their members sorted (UnionArgs declares them so),
// a null member absent as keel reads it.
func echoData(args []byte) ([]byte, error) {
	var v map[string]any
	if err := jsonv2.Unmarshal(args, &v, strict); err != nil {
		return nil, err
	}
	for k, m := range v {
		if m == nil {
			delete(v, k)
		}
	}
	return jsonv2.Marshal(v, strict)
}

func decodeOnly[A any](args []byte) ([]byte, error) {
	var a A
	return nil, jsonv2.Unmarshal(args, &a, strict)
}

func oracleTools(t testing.TB) map[string]*oracleTool {
	quiet := runtime.WithLogger(slog.New(slog.DiscardHandler))
	conf, err := generated.NewExecutor(quiet, runtime.WithErrorDetails())
	if err != nil {
		t.Fatal(err)
	}
	ex, err := examplegen.NewExecutor(quiet, runtime.WithErrorDetails())
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*oracleTool{
		generated.ToolStrings:         {exec: conf, goValue: echo[conformance.StringArgs]},
		generated.ToolNumbers:         {exec: conf, goValue: echo[conformance.NumberArgs]},
		generated.ToolCollections:     {exec: conf, goValue: echo[conformance.CollectionArgs]},
		generated.ToolBatch:           {exec: conf, goValue: decodeOnly[conformance.BatchArgs]},
		generated.ToolProbe:           {exec: conf, goValue: echo[conformance.ProbeArgs]},
		generated.ToolTexts:           {exec: conf, goValue: echo[conformance.TextArgs]},
		generated.ToolInventory:       {exec: conf, goValue: decodeOnly[conformance.InventoryArgs]},
		generated.ToolQuery:           {exec: conf, goValue: echo[conformance.QueryArgs]},
		generated.ToolLinkNodes:       {exec: conf, goValue: decodeOnly[conformance.LinkArgs]},
		generated.ToolPick:            {exec: conf, goValue: decodeOnly[conformance.PickArgs]},
		generated.ToolClear:           {exec: conf, goValue: echo[conformance.ClearArgs]},
		generated.ToolUnion:           {exec: conf, goValue: echoData},
		examplegen.ToolLookupIncident: {exec: ex, goValue: decodeOnly[example.LookupIncidentArgs]},
		examplegen.ToolCreateTicket:   {exec: ex, goValue: decodeOnly[examplegen.CreateTicketArgs]},
	}
	for _, set := range []runtime.ToolSet{generated.ToolSet(), examplegen.ToolSet()} {
		for _, tool := range set.Tools() {
			info := tool.Info()
			o := tools[info.Name]
			if o == nil {
				t.Fatalf("tool %s has no oracle", info.Name)
			}
			o.name = info.Name
			o.input, o.inputDoc = compile(t, info.InputSchema)
			o.output, _ = compile(t, info.OutputSchema)
		}
	}
	return tools
}

func compile(t testing.TB, doc []byte) (*jsonschema.Schema, any) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	// The formats keel holds to their RFCs are held there by
	// internal/formats' own tests (each RFC's cases and the JSON Schema
	// test suite's); here the oracle checks them alike, so the comparison
	// is of which member each format is checked on.
	toolrules.RegisterFormats(c)
	c.UseRegexpEngine(ecmaOracle)
	if err := c.AddResource("keel:///s.json", v); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("keel:///s.json")
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

// ecmaOracle reads patterns (and the regex format) as an ECMA-262 engine
// does, as JSON Schema says: regexp2's ECMAScript mode, apart from keel's
// own translation onto RE2 (toolrules.ECMAPattern), so \s is ECMA-262's
// white space, Unicode's spaces too. (Its . is .NET's, which lets U+2028
// through; no pattern of the set has a bare . — toolrules' own test holds
// . to Node.js's engine.)
func ecmaOracle(pattern string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	return ecmaRegexp{re}, nil
}

type ecmaRegexp struct{ re *regexp2.Regexp }

func (r ecmaRegexp) String() string { return r.re.String() }

func (r ecmaRegexp) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	return ok && err == nil
}

// schemaAccepts is the oracle: strict JSON (jsontext refuses duplicate names
// and invalid UTF-8), one object, and the validator's verdict.
func (o *oracleTool) schemaAccepts(args []byte) bool {
	if trimmed := bytes.TrimLeft(args, " \t\r\n"); len(trimmed) == 0 || string(bytes.TrimRight(trimmed, " \t\r\n")) == "null" {
		args = []byte(`{}`) // absent arguments are {}, as documented (MCP makes them optional)
	}
	if !jsontext.Value(args).IsValid() || !bytes.HasPrefix(bytes.TrimLeft(args, " \t\r\n"), []byte("{")) {
		return false
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return false
	}
	unsetNulls(v, o.inputDoc, o.inputDoc)
	return o.input.Validate(v) == nil
}

// unsetNulls applies keel's documented reading of a null the model sends
// for an optional member that does not allow null: absent. The oracle
// validates what is left, so "the generated path accepts only what the
// schema accepts" holds of the arguments as keel reads them. (Written apart
// from the runtime's own pass, walking the schema rather than the value.)
func unsetNulls(v, schema, root any) {
	s := resolveRef(schema, root)
	switch v := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		required := map[string]bool{}
		if list, ok := s["required"].([]any); ok {
			for _, r := range list {
				required[r.(string)] = true
			}
		}
		for name, sub := range props {
			member, present := v[name]
			if !present {
				continue
			}
			if member == nil && !required[name] && !nullAllowed(resolveRef(sub, root)) {
				delete(v, name)
				continue
			}
			unsetNulls(member, sub, root)
		}
		if extra, ok := s["additionalProperties"].(map[string]any); ok {
			for name, member := range v {
				if _, declared := props[name]; !declared {
					unsetNulls(member, extra, root)
				}
			}
		}
	case []any:
		for _, item := range v {
			unsetNulls(item, s["items"], root)
		}
	}
}

// resolveRef is the schema a "#/$defs/name" $ref stands for in root, or
// schema itself.
func resolveRef(schema, root any) map[string]any {
	s, _ := schema.(map[string]any)
	if ref, ok := s["$ref"].(string); ok {
		defs, _ := root.(map[string]any)["$defs"].(map[string]any)
		if def, ok := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any); ok {
			return def
		}
	}
	return s
}

func nullAllowed(s map[string]any) bool {
	if t, ok := s["type"]; ok {
		list, _ := t.([]any)
		return t == "null" || slices.Contains(list, any("null"))
	}
	return true
}

// longLiteral finds number literals longer than wire.MaxNumberLength, which
// every path refuses before arithmetic (the validator's is quadratic in it).
// (RE2 repeats at most 1000 times.)
var longLiteral = regexp.MustCompile(`[-0-9.eE+]{` + strconv.Itoa(wire.MaxNumberLength) + `}[-0-9.eE+]`)

// hugeExponent finds number literals with an exponent of 4 digits or more.
var hugeExponent = regexp.MustCompile(`[0-9][eE][+-]?0*[0-9]{4}`)

// check runs one call both ways and fails on any disagreement the README
// does not document.
func (o *oracleTool) check(t *testing.T, args []byte) {
	t.Helper()
	r := o.exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "d", Name: o.name, Arguments: args})
	accepted := r.Code() != runtime.CodeInvalidArguments
	if hugeExponent.Match(args) {
		// The validator computes such numbers with math/big: 1e99999999
		// takes it minutes, and 1e-99999999 under multipleOf makes it panic.
		// It has no verdict to compare with; the generated path answered.
		return
	}
	schemaOK := o.schemaAccepts(args)
	switch {
	case accepted && !schemaOK:
		t.Fatalf("%s accepted %q, which the schema refuses", o.name, args)
	case !accepted && schemaOK:
		if reason := documented(o, args, r.Error.Details); reason == "" {
			t.Fatalf("%s refused %q (%v), which the schema accepts, for no documented reason", o.name, args, r.Error.Details)
		}
		return
	case !accepted:
		return
	}
	if ptr, kw := textBoundBroken(o.inputDoc, args); ptr != "" {
		t.Fatalf("%s accepted %q, whose %s breaks its %s", o.name, args, ptr, kw)
	}
	if r.Code() == runtime.CodeInvalidToolOutput {
		t.Fatalf("%s: the echo of valid arguments %q is invalid_tool_output", o.name, args)
	}
	if !r.OK {
		return // a business error of the example
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Data))
	if err != nil || o.output.Validate(out) != nil {
		t.Fatalf("%s: result %s does not pass the output schema: %v", o.name, r.Data, err)
	}
	// The value the handler got, written by the generated writer, is what
	// json v2 makes of the same arguments in the same Go type.
	want, err := o.goValue(args)
	if err == nil && want != nil && !bytes.Equal(want, r.Data) {
		t.Fatalf("%s: for %q the generated path gave %s, json v2 gives %s", o.name, args, r.Data, want)
	}
}

// documented returns the documented reason why the generated path refuses
// arguments the schema accepts, or "":
//   - "maxDepth": nesting past the executor's depth cap;
//   - "range": a number the Go type cannot hold (json v2 cannot decode it either);
//   - a bound: a float that rounds onto or over the bound, so the value the
//     handler would get breaks it;
//   - "format": a leap second, which time.Time cannot hold;
//   - "type": an integer written with a fraction or an exponent (2.0, 1e1);
//   - "contentEncoding": base64 that is not strict (a line break);
//   - "maxLength": a text over wire.MaxText (wire.MaxDuration) bytes for a
//     parser keel does not own, where the member declares no maxLength.
func documented(o *oracleTool, args []byte, details []runtime.Detail) string {
	if len(details) != 1 {
		return ""
	}
	d := details[0]
	switch d.Keyword {
	case "maxDepth":
		if depth(args) > runtime.DefaultLimits().MaxDepth {
			return "nesting beyond the cap"
		}
	case "range":
		if _, err := o.goValue(args); err != nil {
			return "a number outside the Go type"
		}
		if longLiteral.Match(args) {
			return "a number literal longer than keel's bound"
		}
	case "exclusiveMinimum", "exclusiveMaximum", "minimum", "maximum":
		lit, ok := valueAt(args, d.Pointer).(json.Number)
		bound, ok2 := keywordAt(o.inputDoc, d.Pointer, d.Keyword)
		if ok && ok2 && roundsOver(string(lit), string(bound), d.Keyword) {
			return "a float that rounds onto or over its bound"
		}
	case "format":
		if s, ok := valueAt(args, d.Pointer).(string); ok && strings.Contains(s, ":60") {
			return "a leap second"
		}
		if o.name == generated.ToolTexts {
			return "a value the type's own UnmarshalText refuses"
		}
	case "formatMinimum", "formatExclusiveMinimum", "formatMaximum", "formatExclusiveMaximum":
		// The validator takes these as annotations (ajv-formats' vocabulary,
		// not 2020-12's); the oracle compares them itself.
		if ptr, kw := textBoundBroken(o.inputDoc, args); ptr == d.Pointer && kw == d.Keyword {
			return "a text value past its bound, compared in its own form"
		}
	case "contentEncoding":
		// The validator takes contentEncoding as an annotation; the []byte
		// the handler gets cannot hold text that is not base64.
		if s, ok := valueAt(args, d.Pointer).(string); ok {
			if _, err := wire.Base64(s); err != nil {
				return "text that is not strict base64 (RFC 4648: no line breaks), for a []byte"
			}
		}
	case "maxLength":
		// A text for a parser keel does not own (UnmarshalText,
		// time.ParseDuration) is bounded where the schema says no maxLength.
		_, declared := keywordAt(o.inputDoc, d.Pointer, "maxLength")
		if s, ok := valueAt(args, d.Pointer).(string); ok && !declared && len(s) > wire.MaxDuration {
			return "a text over keel's bound for a parser it does not own"
		}
	case "type":
		// A map's detail stops at the map: its keys are the model's text,
		// which keel never echoes; the value is one of its members.
		values := []any{valueAt(args, d.Pointer)}
		if m, ok := values[0].(map[string]any); ok {
			values = slices.Collect(maps.Values(m))
		}
		for _, v := range values {
			if n, ok := v.(json.Number); ok && strings.ContainsAny(string(n), ".eE") {
				return "an integer written with a fraction or an exponent"
			}
		}
	}
	return ""
}

// roundsOver: the literal meets the bound exactly, and its float64 does not.
func roundsOver(lit, bound, keyword string) bool {
	exact, _ := new(big.Rat).SetString(lit)
	b, _ := new(big.Rat).SetString(bound)
	f, err := strconv.ParseFloat(lit, 64)
	if exact == nil || b == nil || err != nil {
		return false
	}
	bf, _ := strconv.ParseFloat(bound, 64)
	switch keyword {
	case "exclusiveMinimum":
		return exact.Cmp(b) > 0 && f <= bf
	case "exclusiveMaximum":
		return exact.Cmp(b) < 0 && f >= bf
	case "minimum":
		return exact.Cmp(b) >= 0 && f < bf
	case "maximum":
		return exact.Cmp(b) <= 0 && f > bf
	}
	return false
}

func depth(v []byte) int {
	deepest, cur := 0, 0
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return deepest
		}
		switch tok.Kind() {
		case '{', '[':
			cur++
			deepest = max(deepest, cur)
		case '}', ']':
			cur--
		}
	}
}

// valueAt is the member of args at an RFC 6901 pointer, numbers exact.
func valueAt(args []byte, ptr string) any {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	for tok := range jsontext.Pointer(ptr).Tokens() {
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// keywordAt is a keyword of the schema at the place ptr names.
func keywordAt(doc any, ptr, keyword string) (json.Number, bool) {
	s, _ := doc.(map[string]any)
	for tok := range jsontext.Pointer(ptr).Tokens() {
		if props, ok := s["properties"].(map[string]any); ok {
			if sub, ok := props[tok].(map[string]any); ok {
				s = sub
				continue
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			s = items
			continue
		}
		return "", false
	}
	switch v := s[keyword].(type) {
	case json.Number:
		return v, true
	case fmt.Stringer:
		return json.Number(v.String()), true
	}
	return "", false
}

// A compiled tool's refusal says, with WithErrorDetails, what its public
// schema says where the call went wrong: the enum's values, the bound, the
// pattern, the members allowed beside the one sent that it lacks, the
// alternatives of which one (or at least one) must be given.
func TestRepairDetailsOfCompiledTools(t *testing.T) {
	exec, err := examplegen.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithErrorDetails())
	if err != nil {
		t.Fatal(err)
	}
	conf, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithErrorDetails())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		exec       *runtime.Executor
		tool, args string
		want       string
	}{
		{exec, examplegen.ToolLookupIncident, `{"incident_id":"INC-1"}`, `[{"pointer":"/incident_id","keyword":"pattern","schema":"^INC-[0-9]{3,}$"}]`},
		{exec, examplegen.ToolLookupIncident, `{"incident_id":"INC-001","limitt":5}`, `[{"pointer":"","keyword":"additionalProperties","unknown":["limitt"],"allowed":["incident_id"]}]`},
		{conf, generated.ToolStrings, `{"code":"a"}`, `[{"pointer":"/code","keyword":"minLength","schema":2}]`},
		{conf, generated.ToolPick, `{"uid":"u","name":"n","title":"t"}`, `[{"pointer":"","keyword":"oneOf","schema":[{"required":["uid"],"title":"by_uid"},{"required":["name"],"title":"by_name"},{"required":["org","slug"],"title":"by_slug"}]}]`},
		{conf, generated.ToolPick, `{"uid":"u"}`, `[{"pointer":"","keyword":"anyOf","schema":[{"required":["title"],"title":"title"},{"required":["tags"],"title":"tags"}]}]`},
	} {
		r := c.exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "r", Name: c.tool, Arguments: []byte(c.args)})
		got, _ := json.Marshal(r.Error.Details)
		if r.Code() != runtime.CodeInvalidArguments || string(got) != c.want {
			t.Errorf("%s %s: %s %s, want %s", c.tool, c.args, r.Code(), got, c.want)
		}
	}
}

// textBoundBroken is the first root member of args whose text breaks a
// formatMinimum-style bound of the schema, compared in the text's own
// form (a Go duration, a decimal as an exact rational), and that bound's
// keyword; "" when none does. (keel's conformance tools bound root members
// only.) Written apart from wire's comparison: time.ParseDuration and
// big.Rat here.
func textBoundBroken(doc any, args []byte) (string, string) {
	var v map[string]any
	if json.Unmarshal(args, &v) != nil {
		return "", ""
	}
	props, _ := doc.(map[string]any)["properties"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(props)) {
		s, ok := v[name].(string)
		if !ok {
			continue
		}
		schema, _ := props[name].(map[string]any)
		for _, kw := range []string{"formatMinimum", "formatExclusiveMinimum", "formatMaximum", "formatExclusiveMaximum"} {
			bound, ok := schema[kw].(string)
			if !ok {
				continue
			}
			c, ok := compareText(s, bound)
			if !ok {
				return "/" + name, kw // not comparable: not a value of the form at all
			}
			held := map[string]bool{"formatMinimum": c >= 0, "formatExclusiveMinimum": c > 0, "formatMaximum": c <= 0, "formatExclusiveMaximum": c < 0}[kw]
			if !held {
				return "/" + name, kw
			}
		}
	}
	return "", ""
}

// compareText compares two durations, or else two decimals.
func compareText(s, bound string) (int, bool) {
	if b, err := time.ParseDuration(bound); err == nil {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, false
		}
		return cmp.Compare(d, b), true
	}
	if len(s) > 64 || hugeExponent.MatchString(s) { // big.Rat would compute the power
		return 0, false
	}
	x, ok1 := new(big.Rat).SetString(s)
	y, ok2 := new(big.Rat).SetString(bound)
	if !ok1 || !ok2 {
		return 0, false
	}
	return x.Cmp(y), true
}
