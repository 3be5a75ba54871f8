// Package keelgenkit gives a keel tool set to Firebase Genkit (Go): each
// tool is a Genkit tool whose definition carries keel's input schema, and
// whose run sends the model's arguments through the keel executor in its
// fixed order, before Genkit's own input check. It is its own module, so a
// user of keel who does not use Genkit does not get it.
//
// Genkit hands a tool the model's arguments decoded and encoded again, so
// keel checks what arrives: a member the model named twice arrives once,
// and a number past 2^53 rounded. Every result, refusals included, is
// keel's result JSON as the tool's output, never an error: Genkit ends the
// whole Generate on a tool's error. A write the policy sends for approval
// is a Genkit interrupt carrying the ApprovalRequest; Restart resumes it
// with a grant. A handler that asks its caller (package ask, of the kinds
// Options.Accepts names) is an interrupt carrying its requests
// (InputRequests); Answer resumes it with the answers.
package keelgenkit

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/resultjson"
)

// Options configure the tools.
type Options struct {
	// Context gives each call's ExecutionContext from the harness's
	// context, never from the model; nil gives the zero ExecutionContext,
	// under which the default policy refuses every write.
	Context func(context.Context) runtime.ExecutionContext
	// Accepts names the kinds of request a handler may ask the harness
	// (package ask): a call that asks is a Genkit interrupt carrying the
	// requests (InputRequests), and Answer resumes it. Zero answers
	// nothing: a handler that asks ends input_unavailable.
	Accepts ask.Kinds
}

// Keys of keel's values in an interrupt's and a restart's metadata.
const (
	approvalKey = "keel_approval"
	inputKey    = "keel_input"
	answersKey  = "keel_answers" // the answers so far, as JSON text
	callIDKey   = "keel_call_id"
	grantKey    = "keel_grant"
	afterKey    = "keel_after" // what a restart answers: "approval" or "input"
)

// Tools returns, as Genkit tools in the set's order for ai.WithTools, the
// tools the caller of ctx (opts.Context) may call: exec.ModelToolsFor, so a
// tool the ToolFilter hides or whose scopes the caller lacks never reaches
// the model.
func Tools(ctx context.Context, exec *runtime.Executor, opts Options) ([]ai.ToolRef, error) {
	if exec == nil {
		return nil, errors.New("keelgenkit: the executor is nil")
	}
	if opts.Context == nil {
		opts.Context = func(context.Context) runtime.ExecutionContext { return runtime.ExecutionContext{} }
	}
	var out []ai.ToolRef
	for _, m := range exec.ModelToolsFor(ctx, opts.Context(ctx)) {
		var input map[string]any
		if err := json.Unmarshal(m.Parameters, &input); err != nil {
			return nil, fmt.Errorf("keelgenkit: tool %s: %w", m.Name, err)
		}
		t := &tool{def: ai.ToolDefinition{Name: m.Name, Description: m.DescriptionForModel(), InputSchema: input,
			Metadata: map[string]any{"multipart": false}}}
		// The inner tool gives the run Genkit's ToolContext (interrupts, a
		// restart's metadata). Its schema is empty so that Genkit checks
		// nothing before keel: keel's schema is the one the model reads.
		t.inner = ai.NewTool(m.Name, m.DescriptionForModel(), t.run(exec, opts), ai.WithInputSchema(map[string]any{}))
		out = append(out, t)
	}
	return out, nil
}

// ApprovalRequest is the call a person must approve, from an interrupted
// tool request in a Generate response (resp.Interrupts()); false for an
// interrupt that is not keel's.
func ApprovalRequest(p *ai.Part) (runtime.ApprovalRequest, bool) {
	req, ok := ai.InterruptAs[approvalMetadata](p)
	if !ok || req.Approval.CallID == "" {
		return runtime.ApprovalRequest{}, false
	}
	return req.Approval, true
}

// Restart is the part for ai.WithToolRestarts that runs an interrupted
// call again, the same call by id, presenting grant (from
// grant.Issue). The grant is checked by the executor and used once;
// nil when p is not keel's interrupt.
func Restart(p *ai.Part, grant string) *ai.Part {
	req, ok := ai.InterruptAs[approvalMetadata](p)
	if !ok || req.Approval.CallID == "" {
		return nil
	}
	return restarter().Restart(p, &ai.RestartOptions{ResumedMetadata: map[string]any{callIDKey: req.Approval.CallID, grantKey: grant, answersKey: req.Answers, afterKey: "approval"}})
}

// InputRequests are what the handler of an interrupted tool request asks
// its caller, by key (package ask): the harness answers each
// (ask.AcceptForm, ask.AnswerSampling, ...) and resumes with Answer; false
// for an interrupt that is not keel's input request.
func InputRequests(p *ai.Part) (map[string]ask.Request, bool) {
	in, ok := ai.InterruptAs[inputMetadata](p)
	if !ok || in.Input.CallID == "" {
		return nil, false
	}
	return in.Input.Requests, true
}

// Answer is the part for ai.WithToolRestarts that runs an interrupted call
// again, the same call by id, with answers to its input requests (and the
// answers of its earlier rounds); nil when p is not keel's input request.
func Answer(p *ai.Part, answers map[string]json.RawMessage) *ai.Part {
	in, ok := ai.InterruptAs[inputMetadata](p)
	if !ok || in.Input.CallID == "" {
		return nil
	}
	all := map[string]json.RawMessage{}
	if in.Answers != "" {
		_ = json.Unmarshal([]byte(in.Answers), &all)
	}
	maps.Copy(all, answers)
	b, _ := json.Marshal(all)
	return restarter().Restart(p, &ai.RestartOptions{ResumedMetadata: map[string]any{callIDKey: in.Input.CallID, answersKey: string(b), afterKey: "input"}})
}

type inputMetadata struct {
	Input   inputRequests `json:"keel_input"`
	Answers string        `json:"keel_answers"`
}

type inputRequests struct {
	CallID   string                 `json:"call_id"`
	Requests map[string]ask.Request `json:"requests"`
}

type approvalMetadata struct {
	Approval runtime.ApprovalRequest `json:"keel_approval"`
	Answers  string                  `json:"keel_answers"`
}

// restarter builds restart parts; a part does not depend on the tool.
var restarter = sync.OnceValue(func() *ai.ToolDef[any, any] {
	return ai.NewTool("keel_restart", "", func(*ai.ToolContext, any) (any, error) { return nil, nil })
})

type rawKey struct{}

// tool is a Genkit tool over one of keel's. Genkit finds it by its action,
// which it registers, so the action is what runs and what the model reads.
type tool struct {
	def   ai.ToolDefinition
	inner *ai.ToolDef[any, any]
}

func (t *tool) run(exec *runtime.Executor, opts Options) ai.ToolFunc[any, any] {
	return func(tc *ai.ToolContext, _ any) (any, error) {
		raw, _ := tc.Value(rawKey{}).(json.RawMessage)
		ec := opts.Context(tc)
		call := runtime.ToolCall{Name: t.def.Name, Arguments: raw, Accepts: opts.Accepts}
		id, resumed := tc.Resumed[callIDKey].(string)
		answers, _ := tc.Resumed[answersKey].(string)
		if resumed {
			ec.Grant, _ = tc.Resumed[grantKey].(string)
			if answers != "" && json.Unmarshal([]byte(answers), &call.Answers) != nil {
				call.Answers = nil
			}
		} else {
			id = "genkit-" + rand.Text()
		}
		call.ID = id
		r := exec.Execute(tc, ec, call)
		// A call waits for approval once per answer it has: a restart from
		// an approval, granted or not, is the person's last word.
		if r.Code() == runtime.CodeApprovalRequired && r.Error.Approval != nil && tc.Resumed[afterKey] != "approval" {
			return nil, tc.Interrupt(&ai.InterruptOptions{Metadata: map[string]any{approvalKey: r.Error.Approval, answersKey: answers}})
		}
		if r.Code() == runtime.CodeInputRequired {
			in := inputRequests{CallID: id, Requests: r.Error.Input}
			return nil, tc.Interrupt(&ai.InterruptOptions{Metadata: map[string]any{inputKey: in, answersKey: answers}})
		}
		return json.RawMessage(resultjson.Text(r, func(runtime.Content) string { return "a Genkit tool output carries JSON only" })), nil
	}
}

func (t *tool) Name() string { return t.def.Name }

func (t *tool) Definition() *ai.ToolDefinition {
	d := t.def
	return &d
}

func (t *tool) RunRaw(ctx context.Context, input any) (any, error) {
	resp, err := t.RunRawMultipart(ctx, input)
	if err != nil {
		return nil, err
	}
	return resp.Output, nil
}

func (t *tool) RunRawMultipart(ctx context.Context, input any) (*ai.MultipartToolResponse, error) {
	b, err := json.Marshal(input)
	if err != nil {
		return nil, err
	}
	return t.inner.RunRawMultipart(context.WithValue(ctx, rawKey{}, json.RawMessage(b)), nil)
}

func (t *tool) Respond(p *ai.Part, output any, opts *ai.RespondOptions) *ai.Part {
	return t.inner.Respond(p, output, opts)
}

func (t *tool) Restart(p *ai.Part, opts *ai.RestartOptions) *ai.Part { return t.inner.Restart(p, opts) }

// Register puts the tool's action where Generate looks tools up by name.
func (t *tool) Register(r api.Registry) {
	a := &action{tool: t}
	provider, id := api.ParseName(t.def.Name)
	r.RegisterAction(api.NewKey(api.ActionTypeToolV2, provider, id), a)
	r.RegisterAction(api.NewKey(api.ActionTypeTool, provider, id), a)
}

// action is the tool as Genkit's registry holds it: its descriptor carries
// keel's schema, and its run takes the arguments as Genkit encoded them.
type action struct{ tool *tool }

func (a *action) Name() string { return a.tool.def.Name }

func (a *action) Register(r api.Registry) { a.tool.Register(r) }

func (a *action) Desc() api.ActionDesc {
	provider, id := api.ParseName(a.tool.def.Name)
	return api.ActionDesc{Type: api.ActionTypeToolV2, Key: api.NewKey(api.ActionTypeToolV2, provider, id),
		Name: a.tool.def.Name, Description: a.tool.def.Description, InputSchema: a.tool.def.InputSchema,
		Metadata: map[string]any{"type": api.ActionTypeToolV2, "name": a.tool.def.Name, "description": a.tool.def.Description,
			"tool": map[string]any{"multipart": false}}}
}

func (a *action) RunJSON(ctx context.Context, input json.RawMessage, cb func(context.Context, json.RawMessage) error) (json.RawMessage, error) {
	r, err := a.RunJSONWithTelemetry(ctx, input, cb)
	if err != nil {
		return nil, err
	}
	return r.Result, nil
}

func (a *action) RunJSONWithTelemetry(ctx context.Context, input json.RawMessage, _ func(context.Context, json.RawMessage) error) (*api.ActionRunResult[json.RawMessage], error) {
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	resp, err := a.tool.inner.RunRawMultipart(context.WithValue(ctx, rawKey{}, input), nil)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	return &api.ActionRunResult[json.RawMessage]{Result: b}, nil
}
