// Package hostile is the catalog of hostile tool calls that keel's tests
// send through both ways of checking a call: the schema validator of a
// hand-bound tool set (runtime) and the generated readers (conformance). The
// arguments are shaped for a tool whose input has incident_id (a pattern),
// count (int), small (int8) and ratio (float64).
package hostile

import "strings"

// Arguments is the catalog of argument bytes that must be rejected as
// invalid_arguments before any policy or handler runs. A case named
// "absent" stands for no arguments at all (nil).
var Arguments = []struct {
	Name string
	Args string
}{
	{"absent", ""},
	{"null", `null`},
	{"array", `[]`},
	{"string", `"x"`},
	{"number", `1`},
	{"true", `true`},
	{"whitespace", " \t\n "},
	{"duplicate", `{"incident_id":"INC-001","incident_id":"INC-002"}`},
	{"duplicate via escape", `{"incident_\u0069d":"INC-001","incident_id":"INC-002"}`},
	{"upper case", `{"INCIDENT_ID":"INC-001"}`},
	{"mixed case", `{"Incident_Id":"INC-001"}`},
	{"long s fold", `{"incident_id":"INC-001","ſmall":1}`},                  // ſ U+017F folds to s
	{"kelvin fold", `{"incident_id":"INC-001","\u212aount":1}`},             // K U+212A folds to k (no field; unknown)
	{"kelvin fold 2", `{"incident_id":"INC-001","coun\u0074":1,"Count":2}`}, // a case variant beside the real name
	{"unknown member", `{"incident_id":"INC-001","extra":true}`},
	{"invalid UTF-8", "{\"incident_id\":\"INC-001\xff\"}"},
	{"invalid UTF-8 in a name", "{\"incident_id\":\"INC-001\",\"\xc3\":1}"},
	{"lone surrogate", `{"incident_id":"INC-001\ud800"}`},
	{"byte-order mark", "\xef\xbb\xbf{\"incident_id\":\"INC-001\"}"},
	{"trailing object", `{"incident_id":"INC-001"} {}`},
	{"trailing garbage", `{"incident_id":"INC-001"}x`},
	{"trailing comma", `{"incident_id":"INC-001",}`},
	{"fraction for integer", `{"incident_id":"INC-001","count":1.5}`},
	{"1.0 for integer", `{"incident_id":"INC-001","count":1.0}`},
	{"exponent overflow", `{"incident_id":"INC-001","count":1e400}`},
	{"beyond int64", `{"incident_id":"INC-001","count":99999999999999999999}`},
	{"a million-digit number", `{"incident_id":"INC-001","ratio":0.` + strings.Repeat("0", 1_000_001) + `1}`},
	{"300 for int8", `{"incident_id":"INC-001","small":300}`},
	{"string for number", `{"incident_id":"INC-001","ratio":"5"}`},
	{"null for required", `{"incident_id":null}`},
	{"missing required", `{}`},
	{"pattern", `{"incident_id":"INC-1"}`},
	{"over the depth cap", `{"incident_id":"INC-001","x":` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + `}`},
	{"over the byte cap", `{"incident_id":"INC-001","x":"` + strings.Repeat("a", 1<<20) + `"}`},
}

// Names must all be unknown_tool.
var Names = []string{
	"Lookup_Incident", "LOOKUP_INCIDENT", " lookup_incident", "lookup_incident ", "lookup_incident\n",
	"lookup_incident\x00", "lookup_іncident" /* Cyrillic і */, "", strings.Repeat("x", 10<<10),
	"LookupIncident", "lookupIncident", "runtime.Execute", "../lookup_incident", "lookup_incident;create_ticket",
}
