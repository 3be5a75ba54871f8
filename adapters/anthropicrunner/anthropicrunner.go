// Package anthropicrunner runs a keel tool set under the Anthropic Go SDK's
// tool runner (BetaToolRunner): each tool of the set becomes a
// sdk.BetaTool whose Execute sends the call through the keel executor, in
// its fixed order, and answers with keel's result. It is its own module, so
// a user of keel who does not use the runner does not get the SDK.
//
// What the runner hands a tool is the model's input decoded and encoded
// again (Go's encoding/json over an any), not the bytes the model sent: an
// integer past 2^53 arrives rounded (9007199254740993 as
// 9007199254740992), 1.50 as 1.5, members in sorted order, and of a member
// named twice only the last. keel checks what arrives, strictly, as on
// every path; a bound that only the exact number would break cannot be
// seen here. Use provider/anthropic with your own loop where that matters.
// The SDK also writes each input_schema again, its properties in sorted
// order; every keyword stays.
//
// The runner answers a tool it does not know itself ("Error: Tool 'x' not
// found"), before keel sees the call, and hands a tool no tool_use id: keel
// gives each call its own id (runner-...), which its result and the audit
// log carry. The runner cannot stop for a person, so a write the policy
// sends for approval waits while Options.Approve asks one, and runs with the
// grant it returns; without Approve it comes back as approval_required with
// the request to approve. Likewise a handler that asks its caller (package
// ask) waits while Options.Answer answers, and runs again with the
// answers; without Answer it ends input_unavailable.
package anthropicrunner

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/keelgen/keel/provider/anthropic"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/answercall"
	"github.com/keelgen/keel/runtime/approvecall"
	"github.com/keelgen/keel/runtime/ask"
)

// Options configure the tools.
type Options struct {
	// Context gives each call's ExecutionContext (who calls, for which
	// tenant, whether side effects are allowed) from the harness's context,
	// never from the model; nil gives the zero ExecutionContext, under which
	// the default policy refuses every write.
	Context func(context.Context) runtime.ExecutionContext
	// Anthropic choose the definitions' form (strict, and which tools first).
	Anthropic anthropic.Options
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

// Tools returns, as the runner's tools in the set's order, the tools the
// caller of ctx (opts.Context) may call: exec.ModelToolsFor, so a tool the
// ToolFilter hides or whose scopes the caller lacks never reaches the model.
func Tools(ctx context.Context, exec *runtime.Executor, opts Options) ([]sdk.BetaTool, error) {
	if exec == nil {
		return nil, errors.New("anthropicrunner: the executor is nil")
	}
	if opts.Context == nil {
		opts.Context = func(context.Context) runtime.ExecutionContext { return runtime.ExecutionContext{} }
	}
	defs, err := anthropic.Tools(exec.ModelToolsFor(ctx, opts.Context(ctx)), opts.Anthropic)
	if err != nil {
		return nil, err
	}
	out := make([]sdk.BetaTool, 0, len(defs))
	for _, d := range defs {
		if d.Type != "" {
			continue // the tool search tool is a server tool: the runner does not run it
		}
		var schema sdk.BetaToolInputSchemaParam
		if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
			return nil, fmt.Errorf("anthropicrunner: tool %s: %w", d.Name, err)
		}
		out = append(out, &tool{def: d, schema: schema, exec: exec, context: opts.Context, approve: opts.Approve, answer: opts.Answer, accepts: opts.Accepts})
	}
	return out, nil
}

// tool is one keel tool as a sdk.BetaTool.
type tool struct {
	def     anthropic.Tool
	schema  sdk.BetaToolInputSchemaParam
	exec    *runtime.Executor
	context func(context.Context) runtime.ExecutionContext
	approve approvecall.Approver
	answer  answercall.Answerer
	accepts ask.Kinds
}

func (t *tool) Name() string                              { return t.def.Name }
func (t *tool) Description() string                       { return t.def.Description }
func (t *tool) InputSchema() sdk.BetaToolInputSchemaParam { return t.schema }

// Execute runs the call through the executor. A successful result is keel's
// result JSON and its content blocks (images, documents) as Anthropic takes
// them; a failed one is an error whose text is keel's result JSON, stable
// code included, which the runner sends as an is_error tool_result.
func (t *tool) Execute(ctx context.Context, input json.RawMessage) ([]sdk.BetaToolResultBlockParamContentUnion, error) {
	call := runtime.ToolCall{ID: "runner-" + rand.Text(), Name: t.def.Name, Arguments: input}
	ec := t.context(ctx)
	r := answercall.Loop(ctx, call, t.accepts, t.answer, func(c runtime.ToolCall) runtime.ToolResult {
		return approvecall.Run(ctx, t.exec, ec, c, t.approve)
	})
	block := anthropic.Result(r)
	if !r.OK {
		return nil, resultError{block.Content[0].Text}
	}
	raw, err := json.Marshal(block.Content)
	if err != nil { // unreachable: keel's blocks encode
		return nil, resultError{`{"ok":false,"error":{"code":"tool_internal_error","message":"The result could not be encoded."}}`}
	}
	var content []sdk.BetaToolResultBlockParamContentUnion
	if err := json.Unmarshal(raw, &content); err != nil {
		return nil, resultError{`{"ok":false,"error":{"code":"tool_internal_error","message":"The result could not be encoded."}}`}
	}
	return content, nil
}

// resultError carries keel's failed result JSON to the runner.
type resultError struct{ json string }

func (e resultError) Error() string { return e.json }
