package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
)

// Executor runs tool calls against one generated ToolSet.
type Executor struct {
	set    ToolSet
	policy Policy
	log    *slog.Logger
	limits Limits
	// unknownMessage lists the valid names (bounded); built once.
	unknownMessage string
}

// Option configures an Executor.
type Option func(*Executor)

// WithPolicy replaces the default SideEffectPolicy.
func WithPolicy(p Policy) Option { return func(e *Executor) { e.policy = p } }

// WithLogger sets the protected log: internal errors, panics with stacks,
// validation detail and policy reasons go there, keyed by call_id. The
// default is slog.Default().
func WithLogger(l *slog.Logger) Option { return func(e *Executor) { e.log = l } }

// WithLimits replaces DefaultLimits. A zero field keeps its default.
func WithLimits(l Limits) Option {
	return func(e *Executor) {
		if l.MaxArgumentBytes > 0 {
			e.limits.MaxArgumentBytes = l.MaxArgumentBytes
		}
		if l.MaxDepth > 0 {
			e.limits.MaxDepth = l.MaxDepth
		}
	}
}

// maxListedTools bounds the names an unknown_tool message lists.
const maxListedTools = 20

// NewExecutor returns an executor for set. It compiles every tool's schemas
// now, so a broken schema fails here and never during a call.
func NewExecutor(set ToolSet, opts ...Option) (*Executor, error) {
	e := &Executor{set: set, policy: SideEffectPolicy{}, log: slog.Default(), limits: DefaultLimits}
	for _, o := range opts {
		o(e)
	}
	tools := set.Tools()
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		if _, _, err := t.schemas(); err != nil {
			return nil, fmt.Errorf("keel: tool %s: %w", t.info.Name, err)
		}
		if got := set.Lookup(t.info.Name); got != t {
			return nil, fmt.Errorf("keel: tool %s is listed but not selected by its own name", t.info.Name)
		}
		names = append(names, t.info.Name)
	}
	e.unknownMessage = "No tool with that name is available."
	if len(names) > 0 {
		more := ""
		if len(names) > maxListedTools {
			more = fmt.Sprintf(" and %d more", len(names)-maxListedTools)
			names = names[:maxListedTools]
		}
		e.unknownMessage += " Available tools: " + strings.Join(names, ", ") + more + "."
	}
	return e, nil
}

// Model-visible messages: fixed text, never an error's own.
const (
	msgInvalidArguments = "The arguments do not match the tool's input schema."
	msgApprovalRequired = "This call needs approval before it can run."
	msgInternal         = "The tool failed with an internal error."
	msgInvalidOutput    = "The tool produced a result that does not match its output schema."
)

// Execute runs one call through the fixed order and returns its one result.
// It never panics on account of the call or the handler.
//
//	registered? → input schema → policy → handler → error classification →
//	output schema → result
func (e *Executor) Execute(ctx context.Context, ec ExecutionContext, call ToolCall) ToolResult {
	// 1. Registered? The generated switch compares the name byte for byte.
	tool := e.set.Lookup(call.Name)
	if tool == nil {
		e.log.LogAttrs(ctx, slog.LevelWarn, "keel: unknown tool",
			slog.String("call_id", call.ID), slog.Int("name_bytes", len(call.Name)))
		return ToolResult{CallID: call.ID, ToolName: call.Name,
			Error: &ToolError{Code: CodeUnknownTool, Message: e.unknownMessage}}
	}
	info := &tool.info
	fail := func(code Code, msg string) ToolResult {
		return ToolResult{CallID: call.ID, ToolName: info.Name, ToolVersion: &info.Version,
			Error: &ToolError{Code: code, Message: msg}}
	}
	attrs := func(more ...slog.Attr) []slog.Attr {
		return append([]slog.Attr{slog.String("call_id", call.ID), slog.String("tool", info.Name)}, more...)
	}
	inSchema, outSchema, err := tool.schemas()
	if err != nil { // only for an executor whose tools bypassed NewExecutor's check
		e.log.LogAttrs(ctx, slog.LevelError, "keel: schema does not compile", attrs(slog.Any("error", err))...)
		return fail(CodeToolInternalError, msgInternal)
	}

	// 2. Input schema: strict parse, validation, then the strict typed decode.
	doc, err := parseObject(call.Arguments, e.limits)
	if err == nil {
		err = inSchema.Validate(doc)
	}
	var args any
	if err == nil {
		args, err = tool.handler.decode(call.Arguments)
	}
	if err != nil {
		e.log.LogAttrs(ctx, slog.LevelInfo, "keel: invalid arguments", attrs(slog.Any("detail", err))...)
		return fail(CodeInvalidArguments, msgInvalidArguments)
	}

	// 3. Policy sees only registered tools with valid arguments.
	d := e.policy.Decide(ctx, PolicyRequest{CallID: call.ID, Tool: *info, Context: ec, Arguments: call.Arguments})
	if !d.Allow {
		e.log.LogAttrs(ctx, slog.LevelInfo, "keel: policy denied", attrs(slog.String("reason", d.Reason))...)
		return fail(CodeApprovalRequired, msgApprovalRequired)
	}

	// 4. Handler, with panics recovered.
	out, err := e.invoke(context.WithValue(ctx, execContextKey{}, ec), tool, args)

	// 5. Business failure keeps its code; anything else is internal.
	if err != nil {
		var bad *outputError
		var biz *ToolExecutionError
		switch {
		case errors.As(err, &bad):
			e.log.LogAttrs(ctx, slog.LevelError, "keel: result does not encode", attrs(slog.Any("error", err))...)
			return fail(CodeInvalidToolOutput, msgInvalidOutput)
		case errors.As(err, &biz) && validBusinessCode(biz.Code):
			return fail(biz.Code, biz.Message)
		default:
			e.log.LogAttrs(ctx, slog.LevelError, "keel: handler error", attrs(slog.Any("error", err))...)
			return fail(CodeToolInternalError, msgInternal)
		}
	}

	// 6. Output schema: nothing unchecked reaches the model.
	res, err := parseObject(out, outputLimits(out))
	if err == nil {
		err = outSchema.Validate(res)
	}
	if err != nil {
		e.log.LogAttrs(ctx, slog.LevelError, "keel: invalid tool output", attrs(slog.Any("detail", err))...)
		return fail(CodeInvalidToolOutput, msgInvalidOutput)
	}

	// 7. Result.
	return ToolResult{CallID: call.ID, ToolName: info.Name, ToolVersion: &info.Version, OK: true, Data: out}
}

// outputLimits: a handler's own result is bounded only by what it made.
func outputLimits(out []byte) Limits { return Limits{MaxArgumentBytes: len(out), MaxDepth: 10000} }

// invoke calls the handler and turns a panic into an error carrying its stack.
func (e *Executor) invoke(ctx context.Context, tool *Tool, args any) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return tool.handler.invoke(ctx, args)
}
