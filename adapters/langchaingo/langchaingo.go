// Package langchaingo gives a keel tool set to tmc/langchaingo: as
// tools.Tool for its agents, each call run by the keel executor in its fixed
// order, and as llms.Tool definitions with keel's schemas for native
// function calling, with the calls in and results out. It is its own module,
// so a user of keel who does not use langchaingo does not get it.
//
// A tools.Tool gets the model's action input as a string, which keel reads
// as the call's JSON arguments, exactly as sent. Every result, failures
// included, is keel's result JSON with its stable code, returned as the
// observation, never as an error: an agent executor stops the whole run on
// a tool's error. langchaingo's agent executor matches a tool's name without
// regard to case before keel sees the call; keel runs the tool it matched,
// under its registered name. An agent cannot stop for a person, so a write
// the policy sends for approval waits while Options.Approve asks one, and
// runs with the grant it returns; a handler that asks its caller (package
// ask) waits while Options.Answer answers, and runs again with the
// answers (without Answer it ends input_unavailable).
package langchaingo

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/answercall"
	"github.com/keelgen/keel/runtime/approvecall"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/resultjson"
)

// Options configure the tools.
type Options struct {
	// Context gives each call's ExecutionContext from the harness's
	// context, never from the model; nil gives the zero ExecutionContext,
	// under which the default policy refuses every write.
	Context func(context.Context) runtime.ExecutionContext
	// Approve asks a person, while the call waits, to approve a call the
	// policy sent for approval, and returns the grant (grant.Issue)
	// that runs it once; "" or an error leaves it refused. Nil never asks.
	Approve func(ctx context.Context, req runtime.ApprovalRequest) (grant string, err error)
	// Answer answers, while the call waits, what a handler asks its
	// caller (package ask): a form for a person, a completion, roots, of
	// the kinds Accepts names. An error leaves the call input_required.
	// Nil, or no kinds, answers nothing: a handler that asks ends
	// input_unavailable.
	Answer  answercall.Answerer
	Accepts ask.Kinds
}

// Tools returns, as agent tools in the set's order, the tools the caller
// of ctx (opts.Context) may call: exec.ModelToolsFor, so a tool the
// ToolFilter hides or whose scopes the caller lacks never reaches the
// model. Each description ends with the JSON Schema the input must match,
// since an agent's prompt is all the model reads of a tool. langchaingo's
// agent matches a name without regard to case, so a set in which two such
// tools differ only in case is refused, the pair named: under the agent
// one would shadow the other.
func Tools(ctx context.Context, exec *runtime.Executor, opts Options) ([]tools.Tool, error) {
	if exec == nil {
		return nil, errors.New("langchaingo: the executor is nil")
	}
	if opts.Context == nil {
		opts.Context = func(context.Context) runtime.ExecutionContext { return runtime.ExecutionContext{} }
	}
	listed := exec.ModelToolsFor(ctx, opts.Context(ctx))
	if err := caseCollision(listed); err != nil {
		return nil, err
	}
	var out []tools.Tool
	for _, m := range listed {
		out = append(out, &tool{model: m, exec: exec, context: opts.Context, approve: opts.Approve, answer: opts.Answer, accepts: opts.Accepts})
	}
	return out, nil
}

// caseCollision names two tools whose names differ only in case.
func caseCollision(listed []runtime.ModelTool) error {
	seen := map[string]string{}
	for _, m := range listed {
		folded := strings.ToUpper(m.Name) // keel's names are ASCII
		if other, ok := seen[folded]; ok {
			return fmt.Errorf("langchaingo: tools %q and %q differ only in case, and langchaingo's agent matches names without regard to case: rename one", other, m.Name)
		}
		seen[folded] = m.Name
	}
	return nil
}

type tool struct {
	model   runtime.ModelTool
	exec    *runtime.Executor
	context func(context.Context) runtime.ExecutionContext
	approve approvecall.Approver
	answer  answercall.Answerer
	accepts ask.Kinds
}

func (t *tool) Name() string { return t.model.Name }

func (t *tool) Description() string {
	return t.model.DescriptionForModel() + " Input: one JSON object matching this JSON Schema: " + string(compact(t.model.Parameters))
}

// Call runs input, the model's JSON arguments, through the executor and
// returns keel's result JSON, whatever the outcome.
func (t *tool) Call(ctx context.Context, input string) (string, error) {
	call := runtime.ToolCall{ID: "agent-" + rand.Text(), Name: t.model.Name, Arguments: json.RawMessage(input)}
	ec := t.context(ctx)
	r := answercall.Loop(ctx, call, t.accepts, t.answer, func(c runtime.ToolCall) runtime.ToolResult {
		return approvecall.Run(ctx, t.exec, ec, c, t.approve)
	})
	return text(r), nil
}

// text is keel's result JSON; content blocks are described in it, since
// an observation and a tool message carry text only.
func text(r runtime.ToolResult) string {
	return resultjson.Text(r, func(runtime.Content) string { return "a langchaingo observation or tool message carries text only" })
}

// Definitions returns, for native function calling (llms.WithTools), the
// tools ec may call (exec.ModelToolsFor), keel's schemas as their parameters.
func Definitions(ctx context.Context, exec *runtime.Executor, ec runtime.ExecutionContext) []llms.Tool {
	var out []llms.Tool
	for _, m := range exec.ModelToolsFor(ctx, ec) {
		out = append(out, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
			Name: m.Name, Description: m.DescriptionForModel(), Parameters: json.RawMessage(m.Parameters)}})
	}
	return out
}

// Call turns a model's tool call into a keel ToolCall; the executor checks
// it, its arguments exactly as the model wrote them.
func Call(c llms.ToolCall) runtime.ToolCall {
	call := runtime.ToolCall{ID: c.ID}
	if c.FunctionCall != nil {
		call.Name, call.Arguments = c.FunctionCall.Name, json.RawMessage(c.FunctionCall.Arguments)
	}
	return call
}

// Result answers a call: keel's result JSON, its stable code included when
// it failed.
func Result(r runtime.ToolResult) llms.ToolCallResponse {
	return llms.ToolCallResponse{ToolCallID: r.CallID, Name: r.ToolName, Content: text(r)}
}

func compact(schema json.RawMessage) []byte {
	var b []byte
	if v, err := json.Marshal(schema); err == nil {
		b = v
	}
	return b
}
