// Package eino gives a keel tool set to cloudwego/eino: each tool an
// InvokableTool whose ToolInfo carries keel's schema and whose InvokableRun
// sends the model's arguments, exactly as sent, through the keel executor
// in its fixed order; and a ToolsNode configuration whose unknown-tools
// handler answers a name the set lacks with keel's own unknown_tool result.
// It is its own module, so a user of keel who does not use eino does not get
// it.
//
// Every result, refusals included, is keel's result JSON with its stable
// code, returned as the tool's output and never as an error: an eino graph
// stops on a tool's error. The call id is the tool call's (compose's
// GetToolCallID), so a grant and the audit log name the call the model made.
//
// A write the policy sends for approval is an eino interrupt whose info is
// the runtime.ApprovalRequest: a graph compiled with a checkpoint store
// stops there, Approvals reads what to approve from its error, and Resume
// runs it again with the grants. A handler that asks its caller (package
// ask, of the kinds Options.Accepts names) interrupts likewise: Inputs
// reads its requests, and ResumeAnswers runs it again with the answers.
package eino

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

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
	// (package ask): a call that asks interrupts the graph with its
	// requests (Inputs), and ResumeAnswers runs it again with the answers.
	// Zero answers nothing: a handler that asks ends input_unavailable.
	Accepts ask.Kinds
}

// Tools returns, as eino tools in the set's order, the tools the caller of
// ctx (opts.Context) may call: exec.ModelToolsFor, so a tool the ToolFilter
// hides or whose scopes the caller lacks never reaches the model.
func Tools(ctx context.Context, exec *runtime.Executor, opts Options) ([]tool.BaseTool, error) {
	if exec == nil {
		return nil, errors.New("eino: the executor is nil")
	}
	opts = withDefaults(opts)
	var out []tool.BaseTool
	for _, m := range exec.ModelToolsFor(ctx, opts.Context(ctx)) {
		var s jsonschema.Schema
		if err := json.Unmarshal(m.Parameters, &s); err != nil {
			return nil, fmt.Errorf("eino: tool %s: %w", m.Name, err)
		}
		info := &schema.ToolInfo{Name: m.Name, Desc: m.DescriptionForModel(), ParamsOneOf: schema.NewParamsOneOfByJSONSchema(&s)}
		out = append(out, &invokable{info: info, exec: exec, opts: opts})
	}
	return out, nil
}

// NodeConfig is a ToolsNode configuration of the tools the caller of ctx
// may call (Tools) whose handler of
// unknown tools runs the name through the executor too: the model reads
// keel's unknown_tool result (with the names it may call), and the audit
// log records the call.
func NodeConfig(ctx context.Context, exec *runtime.Executor, opts Options) (*compose.ToolsNodeConfig, error) {
	tools, err := Tools(ctx, exec, opts)
	if err != nil {
		return nil, err
	}
	run := runner(exec, withDefaults(opts))
	return &compose.ToolsNodeConfig{Tools: tools, UnknownToolsHandler: func(ctx context.Context, name, input string) (string, error) {
		return run(ctx, name, input), nil
	}}, nil
}

func withDefaults(opts Options) Options {
	if opts.Context == nil {
		opts.Context = func(context.Context) runtime.ExecutionContext { return runtime.ExecutionContext{} }
	}
	return opts
}

// runner runs one call and returns keel's result JSON.
func runner(exec *runtime.Executor, opts Options) func(ctx context.Context, name, arguments string) string {
	return func(ctx context.Context, name, arguments string) string {
		return text(run(ctx, exec, opts, "", name, arguments, "", nil))
	}
}

// run runs one call, by id (the tool call's when ""), presenting grant
// when it is not "", with the answers of its earlier rounds.
func run(ctx context.Context, exec *runtime.Executor, opts Options, id, name, arguments, grant string, answers map[string]json.RawMessage) runtime.ToolResult {
	if id == "" {
		id = compose.GetToolCallID(ctx)
	}
	if id == "" {
		id = "eino-" + rand.Text()
	}
	ec := opts.Context(ctx)
	if grant != "" {
		ec.Grant = grant
	}
	return exec.Execute(ctx, ec, runtime.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(arguments), Answers: answers, Accepts: opts.Accepts})
}

func text(r runtime.ToolResult) string {
	return resultjson.Text(r, func(runtime.Content) string { return "an eino tool message carries text only" })
}

// interrupted is what a tool keeps across its interrupt: the approval it
// waits on, or the call id and input requests of a call that asks; and the
// answers of its earlier rounds. Requests and answers are kept as JSON
// text: eino's checkpoint encoding loses a json.RawMessage.
type interrupted struct {
	Approval runtime.ApprovalRequest
	CallID   string
	Requests string
	Answers  string
}

func (s *interrupted) input() Input {
	in := Input{CallID: s.CallID}
	_ = json.Unmarshal([]byte(s.Requests), &in.Requests)
	return in
}

func (s *interrupted) answers() map[string]json.RawMessage {
	var all map[string]json.RawMessage
	_ = json.Unmarshal([]byte(s.Answers), &all) // "" and "null" leave it nil
	if all == nil {
		all = map[string]json.RawMessage{}
	}
	return all
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func init() {
	schema.RegisterName[*interrupted]("keel_eino_interrupted")
	schema.RegisterName[runtime.ApprovalRequest]("keel_approval_request")
	schema.RegisterName[Input]("keel_input_request")
	schema.RegisterName[answers]("keel_answers")
}

// Input is one call an interrupted graph waits on for answers: the
// interrupt to resume, and what its handler asks its caller, by key
// (package ask).
type Input struct {
	InterruptID string
	CallID      string
	Requests    map[string]ask.Request
}

// Inputs are the input requests an eino run's error waits on; none when
// err is not an interrupt of keel's.
func Inputs(err error) []Input {
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok {
		return nil
	}
	var out []Input
	for _, c := range info.InterruptContexts {
		if in, ok := c.Info.(Input); ok && c.IsRootCause {
			in.InterruptID = c.ID
			out = append(out, in)
		}
	}
	return out
}

// answers are the resume data of an input interrupt.
type answers map[string]json.RawMessage

// ResumeAnswers is ctx for running an interrupted graph again (with the
// same checkpoint id): each interrupt in byInterrupt runs its call once
// more, by the same call id, with those answers (ask.AcceptForm, ...) and
// the earlier rounds'. It composes with Resume, for a graph that waits on
// both.
func ResumeAnswers(ctx context.Context, byInterrupt map[string]map[string]json.RawMessage) context.Context {
	data := make(map[string]any, len(byInterrupt))
	for id, a := range byInterrupt {
		data[id] = answers(a)
	}
	return compose.BatchResumeWithData(ctx, data)
}

// Approval is one call an interrupted graph waits on: the interrupt to
// resume, and the call a person must approve.
type Approval struct {
	InterruptID string
	Request     runtime.ApprovalRequest
}

// Approvals are the approvals an eino run's error waits on; none when err
// is not an interrupt of keel's.
func Approvals(err error) []Approval {
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok {
		return nil
	}
	var out []Approval
	for _, c := range info.InterruptContexts {
		if req, ok := c.Info.(runtime.ApprovalRequest); ok && c.IsRootCause {
			out = append(out, Approval{InterruptID: c.ID, Request: req})
		}
	}
	return out
}

// Resume is ctx for running an interrupted graph again (with the same
// checkpoint id): each interrupt in grants runs its call once more, by the
// same call id, presenting the grant (from grant.Issue). An
// interrupt given "" is refused: the model reads approval_required.
func Resume(ctx context.Context, grants map[string]string) context.Context {
	data := make(map[string]any, len(grants))
	for id, g := range grants {
		data[id] = g
	}
	return compose.BatchResumeWithData(ctx, data)
}

type invokable struct {
	info *schema.ToolInfo
	exec *runtime.Executor
	opts Options
}

func (t *invokable) Info(context.Context) (*schema.ToolInfo, error) { return t.info, nil }

// InvokableRun runs the call; its output is keel's result JSON, whatever
// the outcome, but for a call that waits on approval or on answers, which
// interrupts.
func (t *invokable) InvokableRun(ctx context.Context, arguments string, _ ...tool.Option) (string, error) {
	was, _, state := tool.GetInterruptState[*interrupted](ctx)
	if !was || state == nil {
		return t.outcome(ctx, run(ctx, t.exec, t.opts, "", t.info.Name, arguments, "", nil), nil, false)
	}
	if state.CallID != "" {
		target, _, given := tool.GetResumeContext[answers](ctx)
		if !target { // another interrupt is being resumed; this one keeps waiting
			return "", tool.StatefulInterrupt(ctx, state.input(), state)
		}
		all := state.answers()
		maps.Copy(all, given)
		return t.outcome(ctx, run(ctx, t.exec, t.opts, state.CallID, t.info.Name, arguments, "", all), all, false)
	}
	target, _, grant := tool.GetResumeContext[string](ctx)
	if !target {
		return "", tool.StatefulInterrupt(ctx, state.Approval, state)
	}
	given := state.answers()
	return t.outcome(ctx, run(ctx, t.exec, t.opts, state.Approval.CallID, t.info.Name, arguments, grant, given), given, true)
}

// outcome is r as the tool ends: keel's result JSON, or an interrupt for
// an approval (once per round of answers: after a person's word, granted
// or not, the model reads the result) or for the handler's input requests.
func (t *invokable) outcome(ctx context.Context, r runtime.ToolResult, given map[string]json.RawMessage, afterApproval bool) (string, error) {
	switch {
	case r.Code() == runtime.CodeApprovalRequired && r.Error.Approval != nil && !afterApproval:
		return "", tool.StatefulInterrupt(ctx, *r.Error.Approval, &interrupted{Approval: *r.Error.Approval, Answers: jsonText(given)})
	case r.Code() == runtime.CodeInputRequired:
		in := Input{CallID: r.CallID, Requests: r.Error.Input}
		return "", tool.StatefulInterrupt(ctx, in, &interrupted{CallID: in.CallID, Requests: jsonText(in.Requests), Answers: jsonText(given)})
	}
	return text(r), nil
}
