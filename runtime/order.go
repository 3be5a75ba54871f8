package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/wire"
)

// The fixed order: execute runs a call through one stage after another, each
// a method here, and stops at the first that ends the call. The order is
// written out in docs/executor.md; TestOneTextOfTheOrder holds every copy of
// it to this file.

// execute is the fixed order, one step per stage. obs, when not nil,
// collects what observers see.
func (e *Executor) execute(ctx context.Context, ec ExecutionContext, call ToolCall, obs *observedCall) (r ToolResult) {
	tool := e.set.Lookup(call.Name) // 1. registered?
	if tool == nil || !e.dispatchable(tool, call.Name) {
		e.logUnknown(ctx, call.ID, len(call.Name), tool)
		return ToolResult{CallID: call.ID, ToolName: call.Name, Error: &ToolError{Code: CodeUnknownTool, Message: e.unknownMessageFor(ctx, ec)}}
	}
	if e.filter != nil && !e.kept(ctx, ec, tool) { // 2. not hidden from this caller? (hidden: absent, as far as it can tell)
		e.log.LogAttrs(ctx, slog.LevelInfo, "keel: a tool the tool filter hides from this caller; refused as unknown",
			slog.String("call_id", call.ID), slog.String("tool", tool.info.Name))
		return ToolResult{CallID: call.ID, ToolName: call.Name, Error: &ToolError{Code: CodeUnknownTool, Message: e.unknownMessageFor(ctx, ec)}}
	}
	c := newCallRun(e, ctx, call, tool, obs)
	if len(c.info.Scopes) > 0 && !c.scoped(ec) { // 3. scopes: the credentials first, nothing is read for a caller without them
		return c.result
	}
	if e.rates != nil && !ec.RateTaken && c.limited(ec) { // 4. the caller's rate, before any work on its arguments
		return c.result
	}
	args, ok := c.input() // 5. input schema
	if !ok {
		return c.result
	}
	if e.outcomes != nil && c.info.Effect == EffectWrite { // 6. recorded outcome: a write sent again is answered, not run
		if !c.once(ec) {
			return c.result
		}
		defer c.settle(&r) // its end is recorded, or its key cleared, whichever way it ends
	}
	if !c.policy(ec, args) { // 7. effect / approval policy
		return c.result
	}
	err := c.invoke(ec, args) // 8. handler
	c.sw.lap(stageHandler)
	if err != nil { // 9. business error or internal error
		return c.classify(err)
	}
	out, ok := c.output(args) // 10. output schema
	if !ok {
		return c.result
	}
	var blocks []Content
	if cc, has := args.(ContentCall); has {
		if blocks, ok = c.content(cc); !ok {
			return c.result
		}
	}
	r = ToolResult{CallID: call.ID, ToolName: c.info.Name, ToolVersion: &c.info.Version, OK: true, Data: out, Content: blocks} // 11. result
	// Text from outside is shown only between marks, never in the author's text.
	if c.info.OwnText && !c.tool.untrusted { // the contract first: most tools pay one bool, no assertion
		if tc, has := args.(ownText); has {
			r.Text = tc.Text()
		}
	}
	if c.tool.untrusted {
		r.Untrusted = c.tool.untrustedIn(out)
		if len(r.Untrusted) > 0 && ec.Tainted != nil {
			ec.Tainted.Store(true) // the conversation now holds text from outside
		}
	}
	return r
}

// callRun is one registered call on its way through the stages: what each
// stage needs, and the result of the stage that stopped it.
type callRun struct {
	e          *Executor
	ctx        context.Context
	call       ToolCall
	tool       *Tool
	info       *ToolInfo
	rec        *CallRecord
	handler    *callContext // made with the record, for an observed call
	sw         stopwatch
	argsDigest string       // without a record; with one, the record keeps it
	asks       *callContext // the handler's context, whose input requests classify reads
	claim      *claim       // the call's hold on its idempotency key (once), settled at its end
	result     ToolResult
}

func newCallRun(e *Executor, ctx context.Context, call ToolCall, tool *Tool, obs *observedCall) *callRun {
	c := &callRun{e: e, ctx: ctx, call: call, tool: tool, info: &tool.info}
	if obs != nil {
		c.rec, c.handler = &obs.rec, &obs.handler
		obs.rec.Version = c.info.Version
		if obs.timed {
			c.sw.rec = &obs.rec
		}
	}
	return c
}

// kept asks the filter; a panic is a no.
func (e *Executor) kept(ctx context.Context, ec ExecutionContext, tool *Tool) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			e.log.LogAttrs(ctx, slog.LevelError, "keel: the tool filter panicked; the tool is hidden", slog.String("tool", tool.info.Name), slog.Any("panic", p))
			ok = false
		}
	}()
	return e.filter(ctx, ec, tool.Info())
}

// scoped reports whether ec grants every scope the tool declares; else the
// call is insufficient_scope, naming them, so a client can ask for more.
func (c *callRun) scoped(ec ExecutionContext) bool {
	missing := missingScopes(c.info.Scopes, ec.Scopes)
	if missing == nil {
		return true
	}
	c.log(slog.LevelInfo, "keel: insufficient scope", slog.Any("missing", missing))
	c.fail(CodeInsufficientScope, "The caller's credentials lack a scope this tool needs: "+strings.Join(missing, " ")+".")
	return false
}

// limited takes the call from its caller's buckets; false when it is over
// one, or a limiter cannot decide.
func (c *callRun) limited(ec ExecutionContext) bool {
	r := c.e.rates
	wait, err := take(c.ctx, r.Limiter, rateKey(ec, ""), r.PerCaller)
	if lim, ok := r.PerTool[c.info.Name]; ok && err == nil && wait == 0 {
		wait, err = take(c.ctx, r.Limiter, rateKey(ec, c.info.Name), lim)
	}
	switch {
	case err != nil:
		c.log(slog.LevelWarn, "keel: the rate limiter could not decide; the call is refused", slog.Any("error", err))
		e := c.fail(CodeRateLimitExceeded, msgRateUnchecked).Error
		e.RetryAfterSeconds, e.LimitUnchecked = uncheckedRetry, true
		return true
	case wait > 0:
		c.log(slog.LevelInfo, "keel: over the rate limit", slog.Duration("retry_after", wait))
		secs := int(math.Ceil(wait.Seconds()))
		c.fail(CodeRateLimitExceeded, fmt.Sprintf("Too many calls; try again in %d s.", secs)).Error.RetryAfterSeconds = secs
		return true
	}
	return false
}

// input reads the arguments into the call the handler gets. A compiled
// tool's generated reader does it in one pass, checking the schema's
// keywords on the Go values; a hand-bound tool's arguments are parsed
// strictly, validated against the schema, then decoded.
func (c *callRun) input() (wire.Call, bool) {
	if absent(c.call.Arguments) {
		// MCP makes arguments optional and models send null for "none":
		// the call is {} from here on, which a schema with a required
		// member still refuses.
		c.call.Arguments = []byte(`{}`) // its own: a policy may hold it
	}
	var call wire.Call
	var err error
	if c.tool.compiled {
		call, err = readCompiled(c.tool.handler, c.call.Arguments, c.e.limits, c.tool.info.LaxNumbers)
		c.sw.lap(stageDecode)
	} else {
		call, err = c.validatedInput()
	}
	if err != nil {
		var detail any = err
		if c.tool.sensitive { // where and which keyword, never a text that may quote a writeOnly value
			detail = argumentDetails(err, c.tool.inputForDetails(), c.call.Arguments)
		}
		c.log(slog.LevelInfo, "keel: invalid arguments", slog.Any("detail", detail))
		r := c.fail(CodeInvalidArguments, msgInvalidArguments)
		if c.e.details {
			r.Error.Details = argumentDetails(err, c.tool.inputForDetails(), c.call.Arguments)
		}
		return nil, false
	}
	if c.rec != nil {
		c.rec.args = c.call.Arguments // digested only if an observer or the approval check asks
	}
	return call, true
}

// validatedInput is input for a hand-bound tool (Handle).
func (c *callRun) validatedInput() (wire.Call, error) {
	inSchema, _, err := c.tool.schemas()
	if err != nil { // only for tools that bypassed NewExecutor's check
		return nil, fmt.Errorf("schema does not compile: %w", err)
	}
	doc, err := parseObject(c.call.Arguments, c.e.limits)
	c.sw.lap(stageDecode)
	if err == nil {
		dropOptionalNulls(doc, c.tool.inputDoc)
		err = c.validate(inSchema, doc)
		c.sw.lap(stageValidate)
	}
	if err != nil {
		return nil, err
	}
	call, err := c.tool.handler.(validatedHandler).decodeValidated(c.call.Arguments)
	c.sw.lap(stageDecode)
	return call, err
}

// once is the recorded-outcome stage, for a write of an executor made
// WithOutcomes: it claims the call's key and goes on (true), or ends the
// call with the recorded result, or with call_in_progress,
// call_id_reused or idempotency_unchecked (false).
func (c *callRun) once(ec ExecutionContext) bool {
	o := c.e.outcomes
	key := outcomeKey(ec.Tenant, ec.Principal, c.info.Name, c.call.ID)
	mine := Outcome{Token: newToken(), Digest: c.digest(), Until: time.Now().Add(c.timeout() + leaseGrace)}
	held, err := o.store.Claim(c.ctx, key, mine, ec.Attempt.retry())
	switch {
	case err != nil:
		c.log(slog.LevelWarn, "keel: the outcome store could not claim the call; it is refused", slog.Any("error", err))
		c.fail(CodeIdempotencyUnchecked, msgOutcomeUnknown).Error.RetryAfterSeconds = uncheckedRetry
	case held == nil:
		c.claim = &claim{key: key, token: mine.Token}
		return true
	case held.Digest != mine.Digest:
		c.log(slog.LevelInfo, "keel: a call id sent again with other arguments", slog.String("recorded_digest", held.Digest))
		c.fail(CodeCallIDReused, msgCallIDReused)
	case held.Result == nil:
		secs := max(1, int(math.Ceil(time.Until(held.Until).Seconds())))
		c.log(slog.LevelInfo, "keel: a call id sent again while it runs")
		c.fail(CodeCallInProgress, fmt.Sprintf(msgCallInProgress, secs)).Error.RetryAfterSeconds = secs
	default:
		r, err := readOutcome(held.Result)
		if err != nil {
			c.log(slog.LevelError, "keel: a recorded outcome could not be read; the call is refused", slog.Any("error", err))
			c.fail(CodeIdempotencyUnchecked, msgOutcomeUnknown).Error.RetryAfterSeconds = uncheckedRetry
			break
		}
		c.log(slog.LevelInfo, "keel: a call sent again; answered with its recorded outcome")
		r.CallID = c.call.ID
		if len(r.Untrusted) > 0 && ec.Tainted != nil {
			ec.Tainted.Store(true) // as the first answer did
		}
		if c.rec != nil {
			c.rec.Decision = "recorded"
		}
		c.result = r
	}
	return false
}

// settle ends a claimed call's hold on its key: a result that says what
// the handler did is recorded, anything else clears the key, except a
// handler still running past its deadline, whose claim stands until its
// lease ends. The store is written even when the caller has gone.
func (c *callRun) settle(r *ToolResult) {
	var result []byte
	until := time.Time{}
	switch code := r.Code(); {
	case code == CodeToolTimeout:
		return
	case r.OK || code == CodeInvalidToolOutput || (r.Error != nil && !isExecutorCode(code)):
		b, err := recordOutcome(*r)
		if err != nil {
			c.log(slog.LevelError, "keel: the call's outcome could not be encoded; its key is cleared", slog.Any("error", err))
			break
		}
		result, until = b, time.Now().Add(c.e.outcomes.keep)
	}
	ctx := context.WithoutCancel(c.ctx)
	if err := c.e.outcomes.store.Finish(ctx, c.claim.key, c.claim.token, result, until); err != nil {
		c.log(slog.LevelWarn, "keel: the call's outcome could not be stored; its key is held until its lease ends", slog.Any("error", err))
	}
}

// policy decides on a valid call. A call it sends for approval runs only
// with a grant for exactly this call.
func (c *callRun) policy(ec ExecutionContext, args wire.Call) bool {
	e := c.e
	req := PolicyRequest{CallID: c.call.ID, Tool: *c.info, Context: ec, Arguments: c.call.Arguments, call: args}
	if v, ok := args.(argumentValuer); ok {
		req.Value = v.Arguments()
	}
	d := c.decide(req)
	decision := "allow"
	if !d.Allow {
		decision = "deny"
		if d.NeedsApproval {
			decision = "approval_required"
			if e.approvals != nil && ec.Grant != "" {
				if err := e.approvals.redeem(c.ctx, ec, c.approvalRequest()); err != nil {
					c.log(slog.LevelWarn, "keel: grant refused", slog.Any("reason", err))
				} else {
					decision = "approved"
				}
			}
		}
	}
	c.sw.lap(stagePolicy)
	if c.rec != nil {
		c.rec.Decision, c.rec.PolicyReason = decision, d.Reason
	}
	if decision == "allow" || decision == "approved" {
		return true
	}
	c.log(slog.LevelInfo, "keel: policy denied", slog.String("reason", d.Reason))
	r := c.fail(CodeApprovalRequired, msgApprovalRequired)
	if decision == "approval_required" && e.approvals != nil {
		req := c.approvalRequest()
		req.Question, req.Brief = c.tool.questionOf(c.call.Arguments, e.limits.QuestionBrief)
		r.Error.Approval = &req
	}
	return false
}

// decide asks the policy; a policy that panics has decided nothing, and a
// path that cannot decide denies.
func (c *callRun) decide(req PolicyRequest) (d Decision) {
	defer func() {
		if p := recover(); p != nil {
			c.log(slog.LevelError, "keel: the policy panicked; the call is denied", slog.Any("panic", p))
			d = Decision{Reason: "the policy panicked"}
		}
	}()
	return c.e.policy.Decide(c.ctx, req)
}

// invoke runs the handler in its own goroutine, so that one which ignores
// its context still yields a result at the deadline. A panic becomes an
// error carrying its stack. A handler still running after the deadline is
// left to finish; its result is dropped.
func (c *callRun) invoke(ec ExecutionContext, call wire.Call) error {
	ctx := c.ctx
	timeout := c.timeout()
	if err := ctx.Err(); err != nil { // the caller already gave up: run nothing
		return fmt.Errorf("%w: %w before the handler started", errCancelled, err)
	}
	hctx := c.handler // an observed call's, made with its record
	if hctx == nil {
		hctx = new(callContext)
	}
	hctx.parent, hctx.ec, hctx.callID, hctx.tool, hctx.deadline = ctx, ec, c.call.ID, c.info, c.sw.now().Add(timeout)
	hctx.ask = nil
	if c.call.Answers != nil || c.call.Accepts != nil {
		hctx.ask = &askState{answers: c.call.Answers, accepts: c.call.Accepts}
	}
	c.asks = hctx
	defer hctx.cancel(context.Canceled) // as a cancel func would: the handler's own goroutines see the end
	go run(hctx, call)
	// A handler that does not block usually finishes while the caller yields
	// once; then neither a channel nor a timer is used.
	goruntime.Gosched()
	if hctx.state.Load() == finishedFirst {
		return finished(hctx, hctx.result)
	}
	wake := dones.Get().(chan error)
	hctx.wake = wake // published by the CompareAndSwap below
	if !hctx.state.CompareAndSwap(running, callerWaits) {
		dones.Put(wake) // finished in between, before it could send
		return finished(hctx, hctx.result)
	}
	timer := timers.Get().(*time.Timer)
	timer.Reset(time.Until(hctx.deadline))
	defer func() {
		timer.Stop()
		timers.Put(timer)
	}()
	gone := ctx.Done() // nil for a context that is never cancelled: never chosen
	for {
		select {
		case err := <-wake:
			dones.Put(wake)
			return finished(hctx, err)
		case <-timer.C:
			hctx.cancel(context.DeadlineExceeded)
			return fmt.Errorf("%w: %w after %v", errTimeout, context.DeadlineExceeded, timeout)
		case <-gone:
			hctx.cancel(ctx.Err())
			if c.claim == nil {
				return fmt.Errorf("%w: %w", errCancelled, context.Cause(ctx))
			}
			// A claimed write waits for its handler, within its deadline:
			// what it did is recorded for the retry of a caller that left.
			gone = nil
		}
	}
}

// classify: a declared business failure keeps its code and message;
// everything else gets an executor code, and its detail is logged.
func (c *callRun) classify(err error) ToolResult {
	var biz *businessError
	switch {
	case errors.Is(err, ask.ErrCannotAsk): // whatever else it asked, the call cannot end
		c.log(slog.LevelInfo, "keel: the handler needs to ask what the client cannot answer", slog.Any("error", err))
		r := c.fail(CodeInputUnavailable, msgInputUnavailable)
		if c.asks != nil {
			accepts := c.asks.Accepts()
			for key, req := range c.asks.takeAsked() {
				if ask.KindOf(req.Method)&accepts == 0 {
					if r.Error.Input == nil {
						r.Error.Input = map[string]ask.Request{}
					}
					r.Error.Input[key] = req // c.result's too: one ToolError
				}
			}
		}
		return r
	case errors.Is(err, ask.ErrAsked) && c.asks != nil:
		if asked := c.asks.takeAsked(); len(asked) > 0 {
			r := c.fail(CodeInputRequired, msgInputRequired)
			r.Error.Input = asked // c.result's too: one ToolError
			return r
		}
		c.log(slog.LevelError, "keel: the handler returned ask.ErrAsked without asking")
		return c.fail(CodeToolInternalError, msgInternal)
	case errors.Is(err, errCancelled):
		c.log(slog.LevelInfo, "keel: the caller cancelled the call", slog.Any("error", err))
		return c.fail(CodeToolCancelled, msgCancelled)
	case errors.Is(err, errTimeout):
		c.log(slog.LevelWarn, "keel: handler timed out", slog.Any("error", err))
		return c.fail(CodeToolTimeout, msgTimeout)
	case errors.As(err, &biz) && c.info.declares(biz.Code):
		return c.fail(biz.Code, biz.Message)
	case errors.As(err, &biz):
		c.log(slog.LevelError, "keel: handler returned an undeclared error code", slog.String("code", string(biz.Code)), slog.String("message", biz.Message))
		return c.fail(CodeToolInternalError, msgInternal)
	default:
		c.log(slog.LevelError, "keel: handler error", slog.Any("error", err))
		return c.fail(CodeToolInternalError, msgInternal)
	}
}

// output checks and encodes the handler's result within MaxOutputBytes:
// nothing unchecked reaches the model. A compiled tool's generated writer
// checks the Go value as it writes; a hand-bound tool's encoded result is
// validated against the output schema.
func (c *callRun) output(call wire.Call) ([]byte, bool) {
	var out []byte
	var err error
	if c.tool.compiled {
		out, err = c.e.writeResult(c.tool, call)
	} else {
		out, err = c.validatedOutput(call.(encoder))
	}
	c.sw.lap(stageOutput)
	if err != nil {
		c.log(slog.LevelError, "keel: invalid tool output", slog.Any("detail", err))
		c.fail(CodeInvalidToolOutput, msgInvalidOutput)
		return nil, false
	}
	return out, true
}

// content checks a result's content blocks against the MIME types the tool
// declares and the limits, as part of its output: a block that breaks them
// is invalid_tool_output, and the audit records kinds and sizes, never bytes.
func (c *callRun) content(call ContentCall) ([]Content, bool) {
	blocks := call.Content()
	if len(blocks) == 0 {
		return nil, true
	}
	if err := checkContent(blocks, c.info.Content, c.e.limits); err != nil {
		c.log(slog.LevelError, "keel: invalid tool output", slog.Any("detail", err))
		c.fail(CodeInvalidToolOutput, msgInvalidOutput)
		return nil, false
	}
	if c.rec != nil {
		c.rec.Content = make([]ContentRecord, len(blocks))
		for i, b := range blocks {
			c.rec.Content[i] = ContentRecord{Kind: b.Kind, MIMEType: b.MIMEType, Bytes: len(b.Data) + len(b.Text)}
		}
	}
	return blocks, true
}

// ownText is a call whose result has a text of its own (an MCPText
// method), which MCP's text block carries instead of Data's JSON.
type ownText interface{ Text() string }
