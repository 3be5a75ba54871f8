package conformance_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	examplegen "github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/internal/testing/conformance"
	"github.com/keelgen/keel/internal/testing/conformance/generated"
	"github.com/keelgen/keel/internal/testing/hostile"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/wire"
)

// keywordCases are, per tool, arguments that pass and arguments that fail
// one keyword: the detail they must get ("" for a call that passes).
var keywordCases = []struct {
	tool, args, detail string
}{
	{generated.ToolStrings, `{"code":"ab"}`, ""},
	{generated.ToolStrings, `{"code":"a"}`, "/code minLength"},
	{generated.ToolStrings, `{"code":"ééééé"}`, ""}, // five code points, ten bytes
	{generated.ToolStrings, `{"code":"abcdef"}`, "/code maxLength"},
	{generated.ToolStrings, `{"code":"ab","word":"abc"}`, ""},
	// A pattern is ECMA-262's: \S refuses Unicode's spaces, as RE2's \S does not.
	{generated.ToolStrings, `{"code":"ab","handle":"ann"}`, ""},
	{generated.ToolStrings, `{"code":"ab","handle":"a\u00a0b"}`, "/handle pattern"},
	{generated.ToolStrings, `{"code":"ab","handle":"a\u2003b"}`, "/handle pattern"},
	{generated.ToolStrings, `{"code":"ab","handle":"a\u3000b"}`, "/handle pattern"},
	{generated.ToolStrings, `{"code":"ab","handle":"a\u2028b"}`, "/handle pattern"},
	{generated.ToolStrings, `{"code":"ab","handle":"a b"}`, "/handle pattern"},
	{generated.ToolStrings, `{"code":"ab","handle":"a\u200bb"}`, ""}, // a zero-width space is no white space
	{generated.ToolStrings, `{"code":"ab","word":"aBc"}`, "/word pattern"},
	{generated.ToolStrings, `{"code":"ab","digit":"x1y"}`, ""},
	{generated.ToolStrings, `{"code":"ab","digit":"xy"}`, "/digit pattern"},
	{generated.ToolStrings, `{"code":"ab","color":"red"}`, ""},
	{generated.ToolStrings, `{"code":"ab","color":"blue"}`, "/color enum"},
	{generated.ToolStrings, `{"code":"ab","version":"v1"}`, ""},
	{generated.ToolStrings, `{"code":"ab","version":"v2"}`, "/version const"},
	{generated.ToolStrings, `{"code":"ab","when":"2024-02-29T12:00:00Z"}`, ""},
	{generated.ToolStrings, `{"code":"ab","when":"2023-02-29T12:00:00Z"}`, "/when format"},
	{generated.ToolStrings, `{"code":"ab","day":"2024-01-31"}`, ""},
	{generated.ToolStrings, `{"code":"ab","day":"2024-1-31"}`, "/day format"},
	{generated.ToolStrings, `{"code":"ab","clock":"23:59:59+01:00"}`, ""},
	{generated.ToolStrings, `{"code":"ab","clock":"24:00:00Z"}`, "/clock format"},
	{generated.ToolStrings, `{"code":"ab","mail":"a@example.com"}`, ""},
	{generated.ToolStrings, `{"code":"ab","mail":"a.example.com"}`, "/mail format"},
	{generated.ToolStrings, `{"code":"ab","link":"https://example.com/x"}`, ""},
	{generated.ToolStrings, `{"code":"ab","link":"/relative"}`, "/link format"},
	// Formats as their RFCs read them (internal/formats), not looser.
	{generated.ToolStrings, `{"code":"ab","link":"https://example.com/a b"}`, "/link format"},
	{generated.ToolStrings, `{"code":"ab","link":"https://example.com/a\"b"}`, "/link format"},
	{generated.ToolStrings, `{"code":"ab","mail":"@example.com"}`, "/mail format"},
	{generated.ToolStrings, `{"code":"ab","v4":"+1.2.3.4"}`, "/v4 format"},
	{generated.ToolStrings, `{"code":"ab","host":"example.com."}`, "/host format"},
	{generated.ToolStrings, `{"code":"ab","host":"xn--X.example"}`, "/host format"},
	{generated.ToolStrings, `{"code":"ab","host":"xn--bcher-kva.example"}`, ""},
	{generated.ToolStrings, `{"code":"ab","id":"123e4567-e89b-12d3-a456-426614174000"}`, ""},
	{generated.ToolStrings, `{"code":"ab","id":"123e4567e89b12d3a456426614174000"}`, "/id format"},
	{generated.ToolStrings, `{"code":"ab","v4":"10.0.0.1"}`, ""},
	{generated.ToolStrings, `{"code":"ab","v4":"10.0.0.01"}`, "/v4 format"},
	{generated.ToolStrings, `{"code":"ab","v6":"::1"}`, ""},
	{generated.ToolStrings, `{"code":"ab","v6":"fe80::1%eth0"}`, "/v6 format"},
	{generated.ToolStrings, `{"code":"ab","host":"api.example.com"}`, ""},
	{generated.ToolStrings, `{"code":"ab","host":"-api.example.com"}`, "/host format"},
	{generated.ToolStrings, `{"code":"ab","host":"localhost"}`, "/host not"},
	{generated.ToolStrings, `{"code":"ab","host":"localhost.example"}`, ""},
	{generated.ToolStrings, `{"code":"ab","stamp":"2024-02-29T12:00:00.5+02:00"}`, ""},
	{generated.ToolStrings, `{"code":"ab","stamp":"2024-02-29"}`, "/stamp format"},
	{generated.ToolStrings, `{"code":"ab","stamp":"2016-12-31T23:59:60Z"}`, "/stamp range"}, // a leap second: time.Time cannot hold it
	{generated.ToolStrings, `{"code":1}`, "/code type"},
	{generated.ToolStrings, `{}`, "/code required"},
	{generated.ToolStrings, `{"code":"ab","other":1}`, " additionalProperties"},
	{generated.ToolStrings, `{"Code":"ab"}`, " additionalProperties"},

	{generated.ToolNumbers, `{"ratio":0.5}`, ""},
	{generated.ToolNumbers, `{"ratio":0}`, "/ratio exclusiveMinimum"},
	{generated.ToolNumbers, `{"ratio":1}`, "/ratio exclusiveMaximum"},
	{generated.ToolNumbers, `{"ratio":0.99999999999999999999}`, "/ratio exclusiveMaximum"}, // rounds to 1
	{generated.ToolNumbers, `{"ratio":0.5,"amount":1e-400}`, "/amount exclusiveMinimum"},   // rounds to 0
	{generated.ToolNumbers, `{"ratio":0.5,"amount":1e400}`, "/amount range"},
	{generated.ToolNumbers, `{"ratio":0.5,"price":0.1}`, ""},
	{generated.ToolNumbers, `{"ratio":0.5,"price":99.9}`, ""},
	{generated.ToolNumbers, `{"ratio":0.5,"price":0.09999999999999999999}`, "/price minimum"},
	{generated.ToolNumbers, `{"ratio":0.5,"price":99.90000000000000000001}`, "/price maximum"},
	{generated.ToolNumbers, `{"ratio":0.5,"step":1.75}`, ""},
	{generated.ToolNumbers, `{"ratio":0.5,"step":1.7}`, "/step multipleOf"},
	{generated.ToolNumbers, `{"ratio":0.5,"count":10}`, ""},
	{generated.ToolNumbers, `{"ratio":0.5,"count":1e1}`, "/count type"}, // an integer to JSON Schema, not as written
	{generated.ToolNumbers, `{"ratio":0.5,"count":2.0}`, "/count type"},
	{generated.ToolNumbers, `{"ratio":0.5,"count":11}`, "/count maximum"},
	{generated.ToolNumbers, `{"ratio":0.5,"count":1.5}`, "/count type"},
	{generated.ToolNumbers, `{"ratio":0.5,"small":-128}`, ""},
	{generated.ToolNumbers, `{"ratio":0.5,"small":128}`, "/small range"},
	{generated.ToolNumbers, `{"ratio":0.5,"even":-4}`, ""},
	{generated.ToolNumbers, `{"ratio":0.5,"even":3}`, "/even multipleOf"},
	{generated.ToolNumbers, `{"ratio":0.5,"even":100000000000000000000}`, "/even range"},
	{generated.ToolNumbers, `{"ratio":0.5,"size":999}`, ""},
	{generated.ToolNumbers, `{"ratio":0.5,"size":1000}`, "/size exclusiveMaximum"},
	{generated.ToolNumbers, `{"ratio":0.5,"size":-1}`, "/size range"},
	{generated.ToolNumbers, `{"ratio":0.5,"level":3}`, ""},
	{generated.ToolNumbers, `{"ratio":0.5,"level":4}`, "/level enum"},
	{generated.ToolNumbers, `{"ratio":0.5,"gain":2.5}`, ""},
	{generated.ToolNumbers, `{"ratio":0.5,"gain":2.5000001}`, "/gain maximum"},
	{generated.ToolNumbers, `{"ratio":0.5,"half":1.5}`, ""},
	{generated.ToolNumbers, `{"ratio":0.5,"half":1.50000000000000000001}`, "/half enum"},
	{generated.ToolNumbers, `{"ratio":0.5,"flag":true}`, ""},
	{generated.ToolNumbers, `{"ratio":0.5,"flag":"true"}`, "/flag type"},

	{generated.ToolCollections, `{"tags":["a"]}`, ""},
	{generated.ToolCollections, `{"tags":[]}`, "/tags minItems"},
	{generated.ToolCollections, `{"tags":["a","b","c","d","e"]}`, "/tags maxItems"},
	{generated.ToolCollections, `{"tags":["a","a"]}`, "/tags uniqueItems"},
	{generated.ToolCollections, `{"tags":["a",1]}`, "/tags/1 type"},
	{generated.ToolCollections, `{"tags":null}`, "/tags type"},
	{generated.ToolCollections, `{"tags":["a"],"scores":[1,-2,3]}`, ""},
	{generated.ToolCollections, `{"tags":["a"],"labels":{"x":"y","":""}}`, ""},
	{generated.ToolCollections, `{"tags":["a"],"labels":{"x":1}}`, "/labels type"}, // the key is the model's: the pointer stops at the map
	{generated.ToolCollections, `{"tags":["a"],"shares":{"a":100}}`, ""},
	{generated.ToolCollections, `{"tags":["a"],"shares":{"a":101}}`, "/shares maximum"},
	{generated.ToolCollections, `{"tags":["a"],"items":[{"name":"n","weight":1.5}]}`, ""},
	{generated.ToolCollections, `{"tags":["a"],"items":[{"name":"n"},{"weight":1}]}`, "/items/1/name required"},
	{generated.ToolCollections, `{"tags":["a"],"items":[{"name":"n","weight":-1}]}`, "/items/0/weight minimum"},
	{generated.ToolCollections, `{"tags":["a"],"note":null}`, ""},
	{generated.ToolCollections, `{"tags":["a"],"note":"x"}`, ""},
	{generated.ToolCollections, `{"tags":["a"],"note":1}`, "/note type"},
	{generated.ToolCollections, `{"tags":["a"],"since":"2024-01-01T00:00:00Z"}`, ""},
	// A null for an optional member is read as absent; for a required one it
	// is the type error it always was.
	{generated.ToolCollections, `{"tags":["a"],"since":null}`, ""},
	{generated.ToolCollections, `{"tags":null}`, "/tags type"},
	// Text types: the schema's keywords, then the type's own UnmarshalText.
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","addr":"192.0.2.1","net":"10.0.0.0/8","hosts":["::1"],"level":"HIGH"}`, ""},
	{generated.ToolTexts, `{"id":"not-a-uuid"}`, "/id format"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","addr":"192.0.2.999"}`, "/addr format"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","hosts":["::1","nope"]}`, "/hosts/1 format"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","level":"medium"}`, "/level format"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","level":"highest"}`, "/level maxLength"},
	{generated.ToolTexts, `{"id":7}`, "/id type"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","blob":"aGVsbG8="}`, ""},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","wait":"1h30m"}`, ""},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","wait":"150ms"}`, ""},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","wait":2}`, "/wait type"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","wait":"2 seconds"}`, "/wait pattern"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","wait":"9999999999h"}`, "/wait range"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","blob":"not base64!"}`, "/blob contentEncoding"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","blob":"aGVsbG8gd29ybGQgYWdhaW4="}`, "/blob maxLength"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","price":"12.50"}`, ""},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","price":"-3"}`, ""},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","price":12.5}`, "/price type"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","price":"1e5"}`, "/price pattern"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","price":"twelve"}`, "/price pattern"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","owners":{"ops":"1b4e28ba-2fa1-11d2-883f-0016d3cca427"}}`, ""},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","owners":{"ops":"someone"}}`, "/owners format"}, // the key is the model's: the pointer stops at the map
	// netip reads "" as no address at all, and any text as a zone; base64
	// readers skip line breaks; a text for a parser keel does not own is
	// bounded (a decimal parses in quadratic time) unless maxLength says more.
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","addr":""}`, "/addr format"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","net":""}`, "/net format"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","hosts":[""]}`, "/hosts/0 format"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","addr":"fe80::1%eth0"}`, ""},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","addr":"fe80::1%\u0000\nrm -rf /"}`, "/addr format"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","addr":"fe80::1%eth 0"}`, "/addr format"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","blob":"QUJD\nREVG"}`, "/blob contentEncoding"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","blob":"QUJD\r\nREVG"}`, "/blob contentEncoding"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","price":"` + strings.Repeat("9", wire.MaxText) + `"}`, ""},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","price":"` + strings.Repeat("9", wire.MaxText+1) + `"}`, "/price maxLength"},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","wait":"` + strings.Repeat("0", wire.MaxDuration-1) + `s"}`, ""},
	{generated.ToolTexts, `{"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","wait":"` + strings.Repeat("0", wire.MaxDuration) + `s"}`, "/wait maxLength"},
	{generated.ToolCollections, `{"tags":["a"],"extra":{"any": [1, "thing"]}}`, ""},
	{generated.ToolCollections, `{"tags":["a"],"page":2}`, ""},
	{generated.ToolCollections, `{"tags":["a"],"page":0}`, "/page minimum"},
	{generated.ToolCollections, `{"tags":["a"],"extra":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`, "/extra maxDepth"},

	{examplegen.ToolLookupIncident, `{"incident_id":"INC-001"}`, ""},
	{examplegen.ToolLookupIncident, `{"incident_id":"INC-01"}`, "/incident_id pattern"},
	{examplegen.ToolCreateTicket, `{"incident_id":"INC-001"}`, "/summary required"},
	// A recursive type ($defs, $ref): every keyword holds at every depth.
	{generated.ToolQuery, `{"where":{}}`, ""},
	{generated.ToolQuery, `{"where":{"all":[{"field":"a","equals":"1"},{"not":{"any":[{"field":"b"},{"not":{"field":"c"}}]}}]}}`, ""},
	{generated.ToolQuery, `{"where":{"not":{"not":{"not":{"field":"` + strings.Repeat("x", 65) + `"}}}}}`, "/where/not/not/not/field maxLength"},
	{generated.ToolQuery, `{"where":{"any":[{"all":[{},{},{},{},{}]}]}}`, "/where/any/0/all maxItems"},
	{generated.ToolQuery, `{"where":{"not":{"all":[{"fields":"a"}]}}}`, "/where/not/all/0 additionalProperties"},
	{generated.ToolQuery, `{"where":{"not":{"not":{"equals":7}}}}`, "/where/not/not/equals type"},
	{generated.ToolQuery, `{"where":{"not":null}}`, ""}, // an optional member's null is absent, at any depth
	{generated.ToolQuery, `{}`, "/where required"},
	// wire.Nullable: null is its own state, apart from absent; the value's
	// keywords hold on a value.
	{generated.ToolClear, `{"flag":null}`, ""},
	{generated.ToolClear, `{"flag":true,"label":null,"limit":null,"version":null}`, ""},
	{generated.ToolClear, `{"flag":false,"label":"a","limit":3,"version":"v1"}`, ""},
	{generated.ToolClear, `{}`, "/flag required"},
	{generated.ToolClear, `{"flag":null,"label":""}`, "/label minLength"},
	{generated.ToolClear, `{"flag":null,"label":"<a&b>"}`, ""},
	{generated.ToolClear, `{"flag":null,"limit":0}`, "/limit minimum"},
	{generated.ToolClear, `{"flag":null,"limit":128}`, "/limit range"},
	{generated.ToolClear, `{"flag":null,"version":"v2"}`, "/version enum"},
	{generated.ToolClear, `{"flag":"yes"}`, "/flag type"},
	// //keel:union: one value, its alternative chosen by its JSON type,
	// each alternative's keywords on it.
	{generated.ToolUnion, `{"value":"x"}`, ""},
	{generated.ToolUnion, `{"value":2.5,"rows":"all"}`, ""},
	{generated.ToolUnion, `{"value":false,"rows":100}`, ""},
	{generated.ToolUnion, `{"value":null,"rows":null}`, "/value type"},
	{generated.ToolUnion, `{"value":[1]}`, "/value type"},
	{generated.ToolUnion, `{"value":{}}`, "/value type"},
	{generated.ToolUnion, `{"value":"x","rows":0}`, "/rows minimum"},
	{generated.ToolUnion, `{"value":"x","rows":"some"}`, "/rows enum"},
	{generated.ToolUnion, `{"value":"x","rows":true}`, "/rows type"},
	{generated.ToolUnion, `{"value":"x","rows":1.5}`, "/rows type"},
}

// Every keyword passes and fails as the table says, with its pointer and
// keyword, and each case agrees with the validator (or has its documented
// reason not to).
func TestEveryKeyword(t *testing.T) {
	tools := oracleTools(t)
	for _, c := range keywordCases {
		o := tools[c.tool]
		r := o.exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "k", Name: c.tool, Arguments: []byte(c.args)})
		got := ""
		if r.Code() == runtime.CodeInvalidArguments {
			if len(r.Error.Details) != 1 {
				t.Errorf("%s %s: details %v", c.tool, c.args, r.Error.Details)
				continue
			}
			got = r.Error.Details[0].Pointer + " " + r.Error.Details[0].Keyword
		}
		if got != c.detail {
			t.Errorf("%s %s: got %q (code %s), want %q", c.tool, c.args, got, r.Code(), c.detail)
		}
		t.Run("", func(t *testing.T) { o.check(t, []byte(c.args)) })
	}
}

// The cases: a float that rounds onto an exclusive bound is
// refused, and the handler never runs.
func TestFloatsThatRoundOntoABound(t *testing.T) {
	tools := oracleTools(t)
	for _, args := range []string{`{"ratio":0.99999999999999999999}`, `{"ratio":0.5,"amount":1e-400}`, `{"ratio":1e-400}`} {
		before := conformance.Calls.Load()
		r := tools[generated.ToolNumbers].exec.Execute(context.Background(), runtime.ExecutionContext{},
			runtime.ToolCall{ID: "f", Name: generated.ToolNumbers, Arguments: []byte(args)})
		if r.Code() != runtime.CodeInvalidArguments || conformance.Calls.Load() != before {
			t.Errorf("%s: code %q, handler runs %d", args, r.Code(), conformance.Calls.Load()-before)
		}
	}
}

// FuzzGeneratedAgainstSchema is the differential test: for any arguments to
// any tool, the generated path accepts only what the validator accepts,
// refuses what it accepts only for a documented reason, returns a result
// the output schema accepts, and gives the handler the value json v2 would.
//
// Its seeds are the keyword table and the hostile catalog; testdata/fuzz
// keeps the inputs that reach code of the generated sets or the runtime that
// the seeds do not: 87, cut by coverage from the 1,034 a fuzzing run grew
// (the same 1,465 blocks covered before and after). An input that ever fails
// goes there and stays.
func FuzzGeneratedAgainstSchema(f *testing.F) {
	names := []string{generated.ToolStrings, generated.ToolNumbers, generated.ToolCollections, generated.ToolBatch,
		examplegen.ToolLookupIncident, examplegen.ToolCreateTicket, generated.ToolProbe, generated.ToolTexts, generated.ToolQuery, generated.ToolInventory, generated.ToolClear, generated.ToolUnion}
	for _, c := range keywordCases {
		f.Add(uint8(slices.Index(names, c.tool)), []byte(c.args))
	}
	for _, c := range hostile.Arguments {
		if len(c.Args) < 1<<10 {
			f.Add(uint8(slices.Index(names, generated.ToolProbe)), []byte(c.Args))
		}
	}
	f.Add(uint8(3), []byte(`{"rows":[{"id":"R-001","n":1,"text":"a"}]}`))
	tools := oracleTools(f)
	f.Fuzz(func(t *testing.T, tool uint8, args []byte) {
		tools[names[int(tool)%len(names)]].check(t, args)
	})
}

// Absent, empty, blank or null arguments are {} (MCP makes them optional):
// a generated tool with a required member refuses them for that member.
// runtime's TestAbsentArgumentsAreAnEmptyObject runs a tool that takes {}.
func TestAbsentArgumentsMissARequiredMember(t *testing.T) {
	tools := oracleTools(t)
	for _, args := range []string{"", " \n", "null", " null "} {
		var raw []byte
		if args != "" {
			raw = []byte(args)
		}
		r := tools[generated.ToolProbe].exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "a", Name: generated.ToolProbe, Arguments: raw})
		if r.Code() != runtime.CodeInvalidArguments || len(r.Error.Details) != 1 || r.Error.Details[0].Pointer+" "+r.Error.Details[0].Keyword != "/incident_id required" {
			t.Errorf("probe with arguments %q: %+v", args, r.Error)
		}
	}
}
