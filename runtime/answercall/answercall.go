// Package answercall runs one call for a harness that answers a handler's
// input requests itself (package ask): a provider's loop or a framework's
// runner, where no MCP client stands between the handler and the person or
// model that answers. A call that asks is input_required; Run gives each
// request to the harness's Answerer and runs the call again, by the same
// id, with the answers, as MCP's doors do over the wire, until it ends
// otherwise or MaxRounds have been asked.
package answercall

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
)

// Answerer answers one input request of a call, under the key the handler
// gave it: with ask.AcceptForm, ask.DeclineForm, ask.AnswerSampling or
// ask.AnswerRoots. An error leaves the call input_required, unanswered.
type Answerer func(ctx context.Context, key string, r ask.Request) (json.RawMessage, error)

// MaxRounds bounds the rounds of one call: a handler that asks anew each
// round (an answer that never reads) ends input_required.
const MaxRounds = 8

// Run executes call, telling its handler that the harness answers the
// kinds of request in kinds, and answers each round's requests with
// answer. Without an Answerer, or with no kinds, it is exec.Execute.
func Run(ctx context.Context, exec *runtime.Executor, ec runtime.ExecutionContext, call runtime.ToolCall, kinds ask.Kinds, answer Answerer) runtime.ToolResult {
	return Loop(ctx, call, kinds, answer, func(c runtime.ToolCall) runtime.ToolResult { return exec.Execute(ctx, ec, c) })
}

// Loop is Run over run, which executes the call once: an adapter whose
// runner also waits for approvals passes approvecall.Run there, so a write
// that asks is approved, answered, and approved again with its answers.
func Loop(ctx context.Context, call runtime.ToolCall, kinds ask.Kinds, answer Answerer, run func(runtime.ToolCall) runtime.ToolResult) runtime.ToolResult {
	if answer != nil && kinds != 0 {
		call.Accepts = kinds
	}
	answers := maps.Clone(call.Answers)
	r := run(call)
	for round := 1; answer != nil && r.Code() == runtime.CodeInputRequired && round < MaxRounds; round++ {
		if answers == nil {
			answers = map[string]json.RawMessage{}
		}
		for _, key := range slices.Sorted(maps.Keys(r.Error.Input)) {
			a, err := answer(ctx, key, r.Error.Input[key])
			if err != nil {
				return r
			}
			answers[key] = a
		}
		call.Answers = answers
		r = run(call)
	}
	return r
}
