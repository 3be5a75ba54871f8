// Package frameworktest is the scripted conversation every agent-framework
// adapter plays through its framework's own runner: a valid call, invalid
// arguments, an unknown name, a business error, a write that needs
// approval, and a panic, against a small locked set whose handlers count
// their runs. Each adapter's test turns the Steps into its framework's tool
// calls and checks what the model reads with Check, so the six cases mean
// the same thing in every framework.
package frameworktest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/keelgen/keel/internal/testing/leakcheck"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/grant"
	"github.com/keelgen/keel/runtime/keeltest"
)

// The caller every step runs as. It does not allow side effects, so the
// default policy sends the write for approval.
const (
	Principal = "alice"
	Tenant    = "acme"
)

// Tool names of the fixture's set.
const (
	Lookup = "lookup"
	Ticket = "open_ticket"
	Crash  = "crash"
	// Confirm asks the person, through the harness, to confirm the
	// incident before it answers (package ask): AskStep.
	Confirm = "confirm_incident"
)

// Step is one tool call the scripted model makes, and what it must read.
type Step struct {
	Name      string // what the case is, for messages
	Tool      string
	Arguments string
	Code      runtime.Code // "" for a success
}

// Steps are the six cases, in order. The invalid arguments are a wrong type,
// which survives a framework that decodes and re-encodes the model's input.
func Steps() []Step {
	return []Step{
		{Name: "valid", Tool: Lookup, Arguments: `{"id":"INC-1"}`},
		{Name: "invalid", Tool: Lookup, Arguments: `{"id":7}`, Code: runtime.CodeInvalidArguments},
		{Name: "unknown", Tool: "delete_everything", Arguments: `{}`, Code: runtime.CodeUnknownTool},
		{Name: "business", Tool: Lookup, Arguments: `{"id":"missing"}`, Code: "not_found"},
		{Name: "approval", Tool: Ticket, Arguments: `{"id":"INC-1","summary":"restart the pool"}`, Code: runtime.CodeApprovalRequired},
		{Name: "panic", Tool: Crash, Arguments: `{}`, Code: runtime.CodeToolInternalError},
	}
}

// AskStep is the call whose handler asks the person a question (a form),
// which the harness answers (Answer) and the framework resumes: the model
// reads the result once, and Confirm runs to its end once.
func AskStep() Step {
	return Step{Name: "input", Tool: Confirm, Arguments: `{"id":"INC-1"}`}
}

// Answer is the person who answers the handler's question: they confirm.
func (f *Fixture) Answer(_ context.Context, key string, r ask.Request) (json.RawMessage, error) {
	if form, ok := r.Form(); !ok || key != "confirm" || form.Message != "Confirm INC-1?" {
		return nil, fmt.Errorf("frameworktest: not the question Confirm asks: %s %+v", key, r)
	}
	return ask.AcceptForm(Confirmation{Confirm: true})
}

// Confirmation is the form Confirm asks the person to fill.
type Confirmation struct {
	Confirm bool `json:"confirm"`
}

func (*Confirmation) ElicitSchema() []byte {
	return []byte(`{"type":"object","properties":{"confirm":{"type":"boolean","description":"Is the incident right?"}},"required":["confirm"]}`)
}

func (c *Confirmation) ReadElicit(content []byte) error {
	return ask.Decode(c.ElicitSchema(), content, c)
}

// Fixture is an executor over the set, with approvals on.
type Fixture struct {
	Exec *runtime.Executor
	key  grant.Key

	mu   sync.Mutex
	runs map[string]int
}

// New makes a fixture whose grants replay records in replay (one
// process's: memstore.NewReplayStore()).
func New(replay runtime.ReplayStore) (*Fixture, error) {
	f := &Fixture{key: grant.HMACKey([]byte("frameworktest grant key, 32 bytes or more")), runs: map[string]int{}}
	set, err := keeltest.Locked(f.tools()...)
	if err != nil {
		return nil, err
	}
	f.Exec, err = runtime.NewExecutor(set, runtime.WithApprovals(f.key, replay),
		runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Context is the harness's ExecutionContext for every call.
func (f *Fixture) Context(context.Context) runtime.ExecutionContext {
	return runtime.ExecutionContext{Principal: Principal, Tenant: Tenant}
}

// Approve is the person who approves: it signs a grant for exactly req.
func (f *Fixture) Approve(_ context.Context, req runtime.ApprovalRequest) (string, error) {
	return grant.Issue(f.key, req.Grant(Tenant, Principal, time.Now().Add(5*time.Minute)))
}

// Runs is how many times tool's handler has run.
func (f *Fixture) Runs(tool string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs[tool]
}

func (f *Fixture) ran(tool string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs[tool]++
}

// Check says what is wrong with text, keel's result JSON as the model read
// it for step, or "" when it is right: the step's code (or ok), the tool
// named, and nothing internal in the message.
func Check(step Step, text string) string {
	var r runtime.ToolResult
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return fmt.Sprintf("%s: the model read %q, not keel's result JSON: %v", step.Name, text, err)
	}
	if r.ToolName != step.Tool {
		return fmt.Sprintf("%s: the result names tool %q, want %q", step.Name, r.ToolName, step.Tool)
	}
	if r.Code() != step.Code || r.OK != (step.Code == "") {
		return fmt.Sprintf("%s: code %q (ok %v), want %q: %s", step.Name, r.Code(), r.OK, step.Code, text)
	}
	allowed := []string{"No incident has this id."}
	if r.Error != nil && step.Code == runtime.CodeUnknownTool {
		allowed = append(allowed, r.Error.Message) // it lists the set's names; Check still looks for internals in it
	}
	if err := leakcheck.Check(r, allowed...); err != nil {
		return fmt.Sprintf("%s: %v", step.Name, err)
	}
	if strings.Contains(text, "/srv/") || strings.Contains(text, "goroutine") {
		return fmt.Sprintf("%s: internal detail in %s", step.Name, text)
	}
	return ""
}

// Approval reads the request to approve from an approval_required result's
// JSON.
func Approval(text string) (runtime.ApprovalRequest, error) {
	var r runtime.ToolResult
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return runtime.ApprovalRequest{}, err
	}
	if r.Error == nil || r.Error.Approval == nil {
		return runtime.ApprovalRequest{}, fmt.Errorf("no approval request in %s", text)
	}
	return *r.Error.Approval, nil
}

type lookupArgs struct {
	ID string `json:"id"`
}

type incident struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

type ticketArgs struct {
	ID      string `json:"id"`
	Summary string `json:"summary"`
}

type ticket struct {
	Ticket string `json:"ticket"`
}

type noArgs struct{}

const (
	lookupIn  = `{"type":"object","properties":{"id":{"type":"string","description":"an incident id, such as INC-1"}},"required":["id"],"additionalProperties":false}`
	lookupOut = `{"type":"object","properties":{"id":{"type":"string"},"status":{"type":"string"}},"required":["id","status"],"additionalProperties":false}`
	ticketIn  = `{"type":"object","properties":{"id":{"type":"string"},"summary":{"type":"string"}},"required":["id","summary"],"additionalProperties":false}`
	ticketOut = `{"type":"object","properties":{"ticket":{"type":"string"}},"required":["ticket"],"additionalProperties":false}`
	noIn      = `{"type":"object","properties":{},"additionalProperties":false}`
)

func (f *Fixture) tools() []*runtime.Tool {
	tool := func(name string, effect runtime.Effect, desc, in, out string, errs []runtime.Code, h runtime.Handler) *runtime.Tool {
		return runtime.NewTool(runtime.ToolInfo{Name: name, Version: "1.0", Effect: effect, Description: desc,
			InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(out), Errors: errs, Timeout: 10 * time.Second}, h)
	}
	return []*runtime.Tool{
		tool(Lookup, runtime.EffectRead, "Looks up an incident by its id.", lookupIn, lookupOut, []runtime.Code{"not_found"},
			runtime.Handle(func(_ context.Context, a lookupArgs) (incident, error) {
				f.ran(Lookup)
				if a.ID == "missing" {
					return incident{}, runtime.Fail("not_found", "No incident has this id.")
				}
				return incident{ID: a.ID, Status: "open"}, nil
			})),
		tool(Ticket, runtime.EffectWrite, "Opens a follow-up ticket for an incident.", ticketIn, ticketOut, nil,
			runtime.Handle(func(_ context.Context, a ticketArgs) (ticket, error) {
				f.ran(Ticket)
				return ticket{Ticket: "TCK-1 for " + a.ID}, nil
			})),
		tool(Confirm, runtime.EffectRead, "Confirms an incident with the person before it answers.", lookupIn, lookupOut, nil,
			runtime.Handle(func(ctx context.Context, a lookupArgs) (incident, error) {
				c, err := ask.Elicit[Confirmation](ctx, "confirm", "Confirm "+a.ID+"?")
				if err != nil {
					return incident{}, err
				}
				f.ran(Confirm)
				status := "unconfirmed"
				if c.Confirm {
					status = "confirmed"
				}
				return incident{ID: a.ID, Status: status}, nil
			})),
		tool(Crash, runtime.EffectRead, "Always panics.", noIn, lookupOut, nil,
			runtime.Handle(func(context.Context, noArgs) (incident, error) {
				f.ran(Crash)
				panic("index out of range at /srv/crash.go:7")
			})),
	}
}

// Approved is step as the model reads it once a person's grant ran it.
func Approved(step Step) Step {
	if step.Code == runtime.CodeApprovalRequired {
		step.Code = ""
	}
	return step
}

// CheckRuns says what is wrong with how often the handlers ran after the
// steps, "" when right: lookup twice (the valid call and the business
// error), crash once, and the ticket tickets times (once a grant ran it).
func (f *Fixture) CheckRuns(tickets int) string {
	if f.Runs(Lookup) == 2 && f.Runs(Crash) == 1 && f.Runs(Ticket) == tickets {
		return ""
	}
	return fmt.Sprintf("handler runs: lookup %d, crash %d, ticket %d; want 2, 1, %d", f.Runs(Lookup), f.Runs(Crash), f.Runs(Ticket), tickets)
}
