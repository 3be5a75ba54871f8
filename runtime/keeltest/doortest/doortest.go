// Package doortest is the one hostile corpus every door runs: the
// executor, stdio framing, HTTP with sessions and stateless, each
// provider's Call, each framework adapter's runner and the durable
// activity (DESIGN.md, Doors). A door's test builds a Fixture, lists the
// tools through its own listing as the fixture's Caller and hands the
// names to CheckListed, sends every Call through its own shape, and hands
// each answer to CheckAnswer. The fixture counts the audit records per call
// id, so a door that answers without the executor fails CheckAudited.
package doortest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/keelgen/keel/internal/testing/hostile"
	"github.com/keelgen/keel/internal/testing/leakcheck"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// Tool names of the fixture's set.
const (
	Probe   = "lookup_incident" // the tool the hostile arguments are shaped for
	Hidden  = "hidden_tool"     // the fixture's ToolFilter hides it from everyone
	Scoped  = "admin_tool"      // needs the scope "admin", which Caller lacks
	LeftOut = "legacy_tool"     // in the group "legacy", which the fixture's tool groups leave out
)

// Caller is who every door's calls run as.
func Caller() runtime.ExecutionContext {
	return runtime.ExecutionContext{Principal: "mallory", Tenant: "acme"}
}

// Case is one call of the corpus and the code it must end with ("" for a
// success).
type Case struct {
	Name      string
	Tool      string
	Arguments string // the raw bytes; absent when NoArguments
	// NoArguments: the call carries no arguments at all.
	NoArguments bool
	Code        runtime.Code
}

// Calls is the corpus: a valid call, every hostile name (unknown_tool),
// every hostile argument (invalid_arguments), the hidden tool (unknown_tool,
// as if absent) and the scoped-out tool (insufficient_scope, nothing read).
func Calls() []Case {
	cases := []Case{{Name: "valid", Tool: Probe, Arguments: `{"incident_id":"INC-001"}`}}
	for _, n := range hostile.Names {
		cases = append(cases, Case{Name: fmt.Sprintf("name %.40q", n), Tool: n, Arguments: `{"incident_id":"INC-001"}`, Code: runtime.CodeUnknownTool})
	}
	for _, a := range hostile.Arguments {
		cases = append(cases, Case{Name: "arguments " + a.Name, Tool: Probe, Arguments: a.Args, NoArguments: a.Name == "absent", Code: runtime.CodeInvalidArguments})
	}
	for _, extra := range []Case{
		{Name: "deep past the SDK's decoder", Tool: Probe, Arguments: `{"incident_id":"INC-001","x":` + strings.Repeat("[", 1500) + strings.Repeat("]", 1500) + `}`, Code: runtime.CodeInvalidArguments},
		{Name: "a number past any width", Tool: Probe, Arguments: `{"incident_id":"INC-001","count":1` + strings.Repeat("0", 400) + `}`, Code: runtime.CodeInvalidArguments},
		{Name: "hidden tool", Tool: Hidden, Arguments: `{"incident_id":"INC-001"}`, Code: runtime.CodeUnknownTool},
		{Name: "hidden tool, bad arguments", Tool: Hidden, Arguments: `{"x":1e400}`, Code: runtime.CodeUnknownTool},
		{Name: "tool its groups leave out", Tool: LeftOut, Arguments: `{"incident_id":"INC-001"}`, Code: runtime.CodeUnknownTool},
		{Name: "scoped-out tool", Tool: Scoped, Arguments: `{"incident_id":"INC-001"}`, Code: runtime.CodeInsufficientScope},
	} {
		cases = append(cases, extra)
	}
	return cases
}

// Args is c's arguments as a ToolCall carries them.
func (c Case) Args() json.RawMessage {
	if c.NoArguments {
		return nil
	}
	return json.RawMessage(c.Arguments)
}

// JSONArguments reports whether c's arguments are one JSON value, the
// only kind a door that carries arguments as parsed JSON (a provider SDK,
// a framework) can pass on unchanged.
func (c Case) JSONArguments() bool {
	return !c.NoArguments && json.Valid([]byte(c.Arguments))
}

// Fixture is an executor over the three tools, filtered and audited.
type Fixture struct {
	Exec *runtime.Executor
	Set  runtime.ToolSet

	mu      sync.Mutex
	audited map[string]int // call id → records
	refused map[string]int
	runs    int
}

type probeArgs struct {
	ID    string  `json:"incident_id"`
	Count int     `json:"count,omitempty"`
	Small int8    `json:"small,omitempty"`
	Ratio float64 `json:"ratio,omitempty"`
	X     any     `json:"x,omitempty"`
}

type probeResult struct {
	ID string `json:"incident_id"`
}

const probeIn = `{"type":"object","properties":{
	"incident_id":{"type":"string","pattern":"^INC-[0-9]{3,}$"},
	"count":{"type":"integer"},"small":{"type":"integer","minimum":-128,"maximum":127},"ratio":{"type":"number"}},
	"required":["incident_id"],"additionalProperties":false}`

const probeOut = `{"type":"object","properties":{"incident_id":{"type":"string"}},"required":["incident_id"],"additionalProperties":false}`

// New makes a fixture, with extra executor options after its own.
func New(opts ...runtime.Option) (*Fixture, error) {
	f := &Fixture{audited: map[string]int{}, refused: map[string]int{}}
	handle := runtime.Handle(func(_ context.Context, a probeArgs) (probeResult, error) {
		f.mu.Lock()
		f.runs++
		f.mu.Unlock()
		return probeResult{ID: a.ID}, nil
	})
	var tools []*runtime.Tool
	for _, t := range []runtime.ToolInfo{
		{Name: Probe, Description: "Looks up an incident."},
		{Name: Hidden, Description: "A tool no caller may see."},
		{Name: Scoped, Description: "A tool for administrators.", Scopes: []string{"admin"}},
		{Name: LeftOut, Description: "A tool of a group this server does not offer.", Groups: []string{"legacy"}},
	} {
		t.Version, t.Effect = "1.0", runtime.EffectRead
		t.InputSchema, t.OutputSchema = json.RawMessage(probeIn), json.RawMessage(probeOut)
		tools = append(tools, runtime.NewTool(t, handle))
	}
	set, err := keeltest.Locked(tools...)
	if err != nil {
		return nil, err
	}
	f.Set = set
	base := []runtime.Option{
		runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithToolFilter(func(_ context.Context, _ runtime.ExecutionContext, t runtime.ToolInfo) bool { return t.Name != Hidden }),
		runtime.WithToolGroups(runtime.ToolGroups{Without: []string{"legacy"}}),
		runtime.WithObserver(f),
	}
	f.Exec, err = runtime.NewExecutor(set, append(base, opts...)...)
	return f, err
}

// Begin and End are the fixture's audit: one record per call the executor ran.
func (f *Fixture) Begin(ctx context.Context, _ runtime.ToolCall) context.Context { return ctx }

func (f *Fixture) End(_ context.Context, r *runtime.CallRecord) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.audited[r.CallID]++
	if r.Refusal != "" {
		f.refused[r.Refusal]++
	}
}

// Refused is how many audit records of messages a door refused
// (runtime.Executor.Refused) gave reason.
func (f *Fixture) Refused(reason string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused[reason]
}

// Records is how many audit records the executor has written so far.
func (f *Fixture) Records() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.audited {
		n += c
	}
	return n
}

// Audited reports whether a call with this id was audited.
func (f *Fixture) Audited(callID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.audited[callID] > 0
}

// Runs is how many times a handler ran.
func (f *Fixture) Runs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs
}

// internal matches what must never reach a client through a door: Go
// names, paths, positions and stacks, decoder text, and the front's own
// marks (leakcheck's oracle, widened for transports).
var internal = regexp.MustCompile(leakcheck.Pattern.String() + `|json: |cannot unmarshal|unexpected end|invalid character|keel/front|keel/arguments|keel/name|unrepresentable`)

// CheckAnswer checks what a door answered for c: text is everything the
// client read of it (the result's JSON, or the protocol error's), and code
// the keel code it carried ("" for a success).
func CheckAnswer(c Case, code runtime.Code, text string) error {
	if code != c.Code {
		return fmt.Errorf("%s: code %q, want %q (%.200s)", c.Name, code, c.Code, text)
	}
	if m := internal.FindString(text); m != "" {
		return fmt.Errorf("%s: the answer leaks %q: %.300s", c.Name, m, text)
	}
	for _, n := range []string{Hidden, LeftOut} {
		if strings.Contains(text, n) {
			return fmt.Errorf("%s: the answer names %s, which the caller may not see: %.300s", c.Name, n, text)
		}
	}
	return nil
}

// CheckListed checks the names a door listed for Caller: the probe, and
// none of the hidden, the scoped-out and the left-out tool.
func CheckListed(names []string) error {
	if !slices.Contains(names, Probe) {
		return fmt.Errorf("listed %v: %s is missing", names, Probe)
	}
	for _, n := range []string{Hidden, Scoped, LeftOut} {
		if slices.Contains(names, n) {
			return fmt.Errorf("listed %v: %s must be absent for the caller", names, n)
		}
	}
	return nil
}

// Frame is a frame of bytes that is not a request a server can run.
type Frame struct {
	Name  string
	Bytes string // without the line end
}

// Frames are the malformed frames a byte door must answer and survive:
// each is one line on stdio and one POST body over HTTP.
func Frames() []Frame {
	return []Frame{
		{"bare number", `7`},
		{"bare string", `"tools/call"`},
		{"null", `null`},
		{"truncated object", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"`},
		{"stray byte", "\x01"},
		{"not JSON", `hello`},
		{"empty batch", `[]`},
		{"batch", `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"p\xffing\"}"},
		{"no version", `{"id":6,"method":"ping"}`},
		{"method not a string", `{"jsonrpc":"2.0","id":7,"method":{"a":[1,2,{}]}}`},
		{"id an object", `{"jsonrpc":"2.0","id":{},"method":"ping"}`},
		{"params not an object", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":[1]}`},
		{"nested past any decoder", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x","arguments":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`},
		{"member named twice", `{"jsonrpc":"2.0","id":10,"method":"ping","method":"tools/call"}`},
		{"response to nothing", `{"jsonrpc":"2.0","id":11,"result":{}}`},
		{"trailing data", `{"jsonrpc":"2.0","id":12,"method":"ping"} x`},
	}
}

// CheckResultJSON checks a door that hands the model keel's result JSON as
// text: its code, and its message (the tool name in it is the model's own).
func CheckResultJSON(c Case, text string) error {
	var r struct {
		Error *struct {
			Code    runtime.Code `json:"code"`
			Message string       `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return fmt.Errorf("%s: not keel's result JSON: %.200s", c.Name, text)
	}
	if r.Error == nil {
		return CheckAnswer(c, "", "")
	}
	return CheckAnswer(c, r.Error.Code, r.Error.Message)
}

// CodeFor is the code the executor answers for tool and args as Caller:
// what a door that changes the arguments on the way (a framework that
// decodes and encodes them again) must answer for what it passes on.
func CodeFor(f *Fixture, tool string, args []byte) runtime.Code {
	before := f.Records()
	r := f.Exec.Execute(context.Background(), Caller(), runtime.ToolCall{ID: "doortest-oracle", Name: tool, Arguments: args})
	added := f.Records() - before
	f.mu.Lock()
	f.audited["doortest-oracle"] -= added // the oracle's own record does not count
	f.mu.Unlock()
	return r.Code()
}

// Decodable reports whether c's arguments decode into Go values (float64
// numbers): the only arguments a door whose SDK holds the model's input
// decoded (a model SDK, Genkit) can carry at all.
func (c Case) Decodable() bool {
	var v any
	return c.JSONArguments() && json.Unmarshal([]byte(c.Arguments), &v) == nil
}

// CheckDecodedResultJSON is CheckResultJSON for a door whose framework
// decodes the arguments and encodes them again before keel sees them: what
// it changes (a duplicate member merged, a number rounded) keel checks as
// it arrives, so the code must be the executor's for the re-encoded
// arguments; the answer must still say nothing internal.
func CheckDecodedResultJSON(f *Fixture, c Case, text string) error {
	if CheckResultJSON(c, text) == nil {
		return nil
	}
	var again any
	if err := json.Unmarshal([]byte(c.Arguments), &again); err != nil {
		return CheckResultJSON(c, text)
	}
	reencoded, err := json.Marshal(again)
	if err != nil {
		return err
	}
	c.Code = CodeFor(f, c.Tool, reencoded)
	return CheckResultJSON(c, text)
}
