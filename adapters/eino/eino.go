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
// runs it again with the grants.
package eino

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/resultjson"
)

// Options configure the tools.
type Options struct {
	// Context gives each call's ExecutionContext from the harness's
	// context, never from the model; nil gives the zero ExecutionContext,
	// under which the default policy refuses every write.
	Context func(context.Context) runtime.ExecutionContext
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
		return text(run(ctx, exec, opts, "", name, arguments, ""))
	}
}

// run runs one call, by id (the tool call's when ""), presenting grant
// when it is not "".
func run(ctx context.Context, exec *runtime.Executor, opts Options, id, name, arguments, grant string) runtime.ToolResult {
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
	return exec.Execute(ctx, ec, runtime.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(arguments)})
}

func text(r runtime.ToolResult) string {
	return resultjson.Text(r, func(runtime.Content) string { return "an eino tool message carries text only" })
}

// interrupted is what a tool keeps across its approval interrupt.
type interrupted struct {
	Approval runtime.ApprovalRequest
}

func init() {
	schema.RegisterName[*interrupted]("keel_eino_interrupted")
	schema.RegisterName[runtime.ApprovalRequest]("keel_approval_request")
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
// the outcome, but for a call that waits on approval, which interrupts.
func (t *invokable) InvokableRun(ctx context.Context, arguments string, _ ...tool.Option) (string, error) {
	was, _, state := tool.GetInterruptState[*interrupted](ctx)
	if !was || state == nil {
		r := run(ctx, t.exec, t.opts, "", t.info.Name, arguments, "")
		if r.Code() == runtime.CodeApprovalRequired && r.Error.Approval != nil {
			return "", tool.StatefulInterrupt(ctx, *r.Error.Approval, &interrupted{Approval: *r.Error.Approval})
		}
		return text(r), nil
	}
	target, _, grant := tool.GetResumeContext[string](ctx)
	if !target { // another interrupt is being resumed; this one keeps waiting
		return "", tool.StatefulInterrupt(ctx, state.Approval, state)
	}
	return text(run(ctx, t.exec, t.opts, state.Approval.CallID, t.info.Name, arguments, grant)), nil
}
