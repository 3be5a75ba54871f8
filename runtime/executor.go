package runtime

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/keelgen/keel/internal/lockfile"
	"github.com/keelgen/keel/runtime/wire"
)

// Executor runs tool calls against one generated ToolSet. It is safe for
// concurrent use.
type Executor struct {
	set     ToolSet
	policy  Policy
	log     *slog.Logger
	limits  Limits
	timeout time.Duration
	details bool
	// signer and pinned are start-up requirements on the lock.
	signer    ed25519.PublicKey
	pinned    string
	setDigest string
	approvals *approvals
	observers []Observer
	// filter hides tools from some callers; scoped: a tool declares scopes.
	// Either makes what a caller sees depend on who it is (Varies).
	filter ToolFilter
	scoped bool
	rates  *RateLimits
	// verified holds the tools NewExecutor checked and the ToolGroups
	// offer; Execute dispatches to no other. off holds those they leave out.
	verified map[*Tool]struct{}
	groups   *ToolGroups
	off      map[*Tool]struct{}
	// unknownMessage lists the valid names (bounded); built once.
	unknownMessage string
	// optionErrs are options given a value that would weaken a check; NewExecutor refuses them.
	optionErrs []error
}

// Option configures an Executor. An option given a nil, empty or malformed
// value makes NewExecutor fail: a zero value never turns a check off.
type Option func(*Executor)

// refuse records a misconfigured option for NewExecutor to report.
func (e *Executor) refuse(option, format string, args ...any) {
	e.optionErrs = append(e.optionErrs, fmt.Errorf("%s: %s", option, fmt.Sprintf(format, args...)))
}

// WithPolicy replaces the default SideEffectPolicy.
func WithPolicy(p Policy) Option {
	return func(e *Executor) {
		if p == nil {
			e.refuse("WithPolicy", "the policy is nil")
			return
		}
		e.policy = p
	}
}

// WithLogger sets the protected log: internal errors, panics with stacks,
// validation detail and policy reasons go there, keyed by call_id. The
// default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(e *Executor) {
		if l == nil {
			e.refuse("WithLogger", "the logger is nil")
			return
		}
		e.log = l
	}
}

// WithLimits replaces DefaultLimits(). A zero field keeps its default.
func WithLimits(l Limits) Option {
	return func(e *Executor) {
		if l.MaxArgumentBytes > 0 {
			e.limits.MaxArgumentBytes = l.MaxArgumentBytes
		}
		if l.MaxDepth > 0 {
			e.limits.MaxDepth = l.MaxDepth
		}
		if l.MaxOutputBytes > 0 {
			e.limits.MaxOutputBytes = l.MaxOutputBytes
		}
		if l.MaxContentBlocks > 0 {
			e.limits.MaxContentBlocks = l.MaxContentBlocks
		}
		if l.MaxContentBytes > 0 {
			e.limits.MaxContentBytes = l.MaxContentBytes
		}
	}
}

// DefaultTimeout bounds a handler whose tool declares no timeout=.
const DefaultTimeout = 30 * time.Second

// WithDefaultTimeout bounds handlers of tools that declare no timeout.
func WithDefaultTimeout(d time.Duration) Option {
	return func(e *Executor) {
		if d > 0 {
			e.timeout = d
		}
	}
}

// WithErrorDetails adds Details to invalid_arguments results, for harnesses
// that let the model repair its call. They name schema places and keywords,
// never values. Off by default.
func WithErrorDetails() Option { return func(e *Executor) { e.details = true } }

// WithRequiredSignature makes NewExecutor refuse a tool set whose lock is
// not signed (keelgen -sign) by the private key of pub. A nil or malformed
// pub (say, after an ignored ParsePublicKeyPEM error) fails NewExecutor.
func WithRequiredSignature(pub ed25519.PublicKey) Option {
	return func(e *Executor) {
		if err := lockfile.CheckPublicKey(pub); err != nil {
			e.refuse("WithRequiredSignature", "%v", err)
			return
		}
		e.signer = slices.Clone(pub)
	}
}

// WithExpectedSetDigest pins the exact tool set: NewExecutor refuses any
// other set digest. An empty or malformed digest fails NewExecutor.
func WithExpectedSetDigest(digest string) Option {
	return func(e *Executor) {
		if !isSetDigest(digest) {
			e.refuse("WithExpectedSetDigest", "%q is not a set digest (sha256: and 64 lowercase hex digits)", digest)
			return
		}
		e.pinned = digest
	}
}

// isSetDigest reports whether d has the form Digest returns.
func isSetDigest(d string) bool {
	hexPart, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hexPart) != 64 {
		return false
	}
	for _, c := range []byte(hexPart) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// maxListedTools bounds the names an unknown_tool message lists.
const maxListedTools = 20

// NewExecutor returns an executor for set. Before it accepts any call it
// recomputes the digests of every contract and compares them with the
// embedded keel.lock.json, and checks the signature and the pinned digest
// when the options ask for them; for a set without a lock it compiles every
// schema. Any disagreement is an error here, never a surprise during a call.
func NewExecutor(set ToolSet, opts ...Option) (*Executor, error) {
	e := &Executor{set: set, policy: SideEffectPolicy{}, log: slog.Default(), limits: DefaultLimits(), timeout: DefaultTimeout}
	if set == nil {
		return nil, errors.New("keel: the tool set is nil")
	}
	for _, o := range opts {
		if o == nil {
			e.refuse("NewExecutor", "an option is nil")
			continue
		}
		o(e)
	}
	if err := errors.Join(e.optionErrs...); err != nil {
		return nil, fmt.Errorf("keel: %w", err)
	}
	tools := set.Tools()
	names := make([]string, 0, len(tools))
	e.verified = make(map[*Tool]struct{}, len(tools))
	// A set with a lock has its schemas proven by the digests below: keelgen
	// compiled each one before it wrote it, so they compile on first use.
	// A set without one (made by hand) has them compiled here.
	lockFile, _ := set.Lock()
	for _, t := range tools {
		if t == nil {
			return nil, errors.New("keel: the tool set lists a nil tool")
		}
		if t.handler == nil {
			return nil, fmt.Errorf("keel: tool %s has no handler", t.info.Name)
		}
		if err := t.checkCodes(); err != nil {
			return nil, fmt.Errorf("keel: tool %s: %w", t.info.Name, err)
		}
		if !t.compiled {
			if err := checkHandBound(t.info.InputSchema); err != nil {
				return nil, fmt.Errorf("keel: tool %s: %w", t.info.Name, err)
			}
		}
		if lockFile == nil {
			if _, _, err := t.schemas(); err != nil {
				return nil, fmt.Errorf("keel: tool %s: %w", t.info.Name, err)
			}
		}
		if got := set.Lookup(t.info.Name); got != t {
			return nil, fmt.Errorf("keel: tool %s is listed but not selected by its own name", t.info.Name)
		}
		if _, dup := e.verified[t]; dup {
			return nil, fmt.Errorf("keel: tool %s is listed twice", t.info.Name)
		}
		e.verified[t] = struct{}{}
		e.scoped = e.scoped || len(t.info.Scopes) > 0
	}
	if err := e.applyToolGroups(tools); err != nil {
		return nil, fmt.Errorf("keel: %w", err)
	}
	for t := range e.verified {
		names = append(names, t.info.Name)
	}
	sort.Strings(names)
	if err := e.checkRateTools(); err != nil {
		return nil, fmt.Errorf("keel: %w", err)
	}
	if err := e.verifyLock(set); err != nil {
		return nil, fmt.Errorf("keel: %w", err)
	}
	e.unknownMessage = unknownMessage(names)
	return e, nil
}

// verifyLock checks the embedded lock against the contracts the binary
// holds, then the signature and the pin, and logs the set digest.
func (e *Executor) verifyLock(set ToolSet) error {
	lockFile, sig := set.Lock()
	if lockFile == nil {
		if e.signer != nil || e.pinned != "" {
			return fmt.Errorf("the tool set has no %s to verify", lockfile.FileName)
		}
		return nil
	}
	contracts := make([]lockfile.Contract, 0, len(set.Tools()))
	for _, t := range set.Tools() {
		contracts = append(contracts, contract(t.info))
	}
	l, err := lockfile.Verify(lockFile, contracts)
	if err != nil {
		return fmt.Errorf("tool set integrity: %w", err)
	}
	if e.signer != nil {
		if err := lockfile.VerifySignature(e.signer, lockFile, sig); err != nil {
			return fmt.Errorf("tool set signature: %w", err)
		}
	}
	if e.pinned != "" && e.pinned != l.SetDigest {
		return fmt.Errorf("tool set digest is %s, pinned %s", l.SetDigest, e.pinned)
	}
	e.setDigest = l.SetDigest
	e.log.LogAttrs(context.Background(), slog.LevelInfo, "keel: tool set verified",
		slog.String("set_digest", l.SetDigest), slog.Int("tools", len(contracts)), slog.Bool("signed", e.signer != nil))
	return nil
}

// ToolSet is the set e executes, whose tools a server offers (mcpserver.New
// takes it from here, so what it lists is what the executor runs).
func (e *Executor) ToolSet() ToolSet { return e.set }

// SetDigest is the verified set digest of the executor's tool set (from
// keel.lock.json), "" for a set without a lock. Log it: it answers "which
// tools could the model call" for any later review.
func (e *Executor) SetDigest() string { return e.setDigest }

// Model-visible messages: fixed text, never an error's own.
const (
	msgUnknownTool      = "No tool with that name is available."
	msgInvalidArguments = "The arguments do not match the tool's input schema."
	msgApprovalRequired = "This call needs approval before it can run."
	msgInternal         = "The tool failed with an internal error."
	msgInvalidOutput    = "The tool produced a result that does not match its output schema."
	msgTimeout          = "The tool did not finish in time."
	msgCancelled        = "The call was cancelled before the tool finished."
)

// Execute runs one call through the fixed order and returns its one result.
// Neither the call nor the handler can make it panic. Observers (the audit
// log, traces) see every call once, with its stage timings.
//
//	registered and visible? → scopes → rate → input schema → policy →
//	handler → business or internal error → output schema → result
func (e *Executor) Execute(ctx context.Context, ec ExecutionContext, call ToolCall) (r ToolResult) {
	defer func() {
		// The handler runs on its own goroutine, which recovers; this is for
		// everything else a call's bytes reach on this one (a validator, a
		// policy, an observer): a result, never a crashed process.
		if p := recover(); p != nil {
			e.log.LogAttrs(ctx, slog.LevelError, "keel: a panic while executing a call", slog.String("call_id", call.ID), slog.Any("panic", p))
			r = ToolResult{CallID: call.ID, ToolName: call.Name, Error: &ToolError{Code: CodeToolInternalError, Message: msgInternal}}
		}
	}()
	if len(e.observers) == 0 {
		return e.execute(ctx, ec, call, nil)
	}
	name := call.Name
	if len(name) > maxRecordedName { // an unknown name is the model's: bound what the log keeps
		name = name[:maxRecordedName] + "…"
	}
	rec := &CallRecord{CallID: call.ID, Tool: name, SetDigest: e.setDigest, Tenant: ec.Tenant, Principal: ec.Principal, Start: time.Now()}
	if ec.Attempt != nil {
		rec.Attempt = *ec.Attempt
	}
	ends := make([]func(*CallRecord), len(e.observers))
	for i, o := range e.observers {
		ctx, ends[i] = o.Begin(ctx, call)
	}
	r = e.execute(ctx, ec, call, rec)
	rec.Duration, rec.Code, rec.OK = time.Since(rec.Start), r.Code(), r.OK
	for i := len(ends) - 1; i >= 0; i-- {
		ends[i](rec)
	}
	return r
}

// dispatchable reports whether tool was verified by NewExecutor and carries
// exactly the name the call asked for.
func (e *Executor) dispatchable(tool *Tool, name string) bool {
	if tool.info.Name != name {
		return false
	}
	_, ok := e.verified[tool]
	return ok
}

// maxRecordedName bounds the tool name an observer records.
const maxRecordedName = 128

// execute is the fixed order, one step per stage. rec, when not nil,
// collects what observers see.
func (e *Executor) execute(ctx context.Context, ec ExecutionContext, call ToolCall, rec *CallRecord) ToolResult {
	tool := e.set.Lookup(call.Name) // 1. registered, for this caller?
	if tool == nil || !e.dispatchable(tool, call.Name) {
		e.logUnknown(ctx, call.ID, len(call.Name), tool)
		return ToolResult{CallID: call.ID, ToolName: call.Name, Error: &ToolError{Code: CodeUnknownTool, Message: e.unknownMessageFor(ctx, ec)}}
	}
	if e.filter != nil && !e.kept(ctx, ec, tool) { // hidden from this caller: absent, as far as it can tell
		e.log.LogAttrs(ctx, slog.LevelInfo, "keel: a tool the tool filter hides from this caller; refused as unknown",
			slog.String("call_id", call.ID), slog.String("tool", tool.info.Name))
		return ToolResult{CallID: call.ID, ToolName: call.Name, Error: &ToolError{Code: CodeUnknownTool, Message: e.unknownMessageFor(ctx, ec)}}
	}
	c := newCallRun(e, ctx, call, tool, rec)
	if len(c.info.Scopes) > 0 && !c.scoped(ec) { // the credentials first: nothing is read for a caller without them
		return c.result
	}
	if e.rates != nil && c.limited(ec) { // then the caller's rate, before any work on its arguments
		return c.result
	}
	args, ok := c.input() // 2. input schema
	if !ok {
		return c.result
	}
	if !c.policy(ec, args) { // 3. effect / approval policy
		return c.result
	}
	err := e.invoke(ctx, ec, call.ID, tool, args) // 4. handler
	c.sw.lap(stageHandler)
	if err != nil { // 5. business error or internal error
		return c.classify(err)
	}
	out, ok := c.output(args) // 6. output schema
	if !ok {
		return c.result
	}
	var blocks []Content
	if cc, has := args.(ContentCall); has {
		if blocks, ok = c.content(cc); !ok {
			return c.result
		}
	}
	return ToolResult{CallID: call.ID, ToolName: c.info.Name, ToolVersion: &c.info.Version, OK: true, Data: out, Content: blocks} // 7. result
}

// logUnknown logs a name the generated switch does not select, or that
// selects a tool NewExecutor did not verify under that very name (a case
// added to the switch by hand): the latter at error level.
func (e *Executor) logUnknown(ctx context.Context, callID string, nameBytes int, selected *Tool) {
	if _, off := e.off[selected]; off {
		e.log.LogAttrs(ctx, slog.LevelInfo, "keel: a tool this server's tool groups leave out; refused as unknown",
			slog.String("call_id", callID), slog.String("tool", selected.info.Name))
		return
	}
	if selected != nil {
		e.log.LogAttrs(ctx, slog.LevelError, "keel: the tool set's switch selected a tool that was not verified under that name; refused",
			slog.String("call_id", callID), slog.Int("name_bytes", nameBytes), slog.String("selected", selected.info.Name))
	}
	e.log.LogAttrs(ctx, slog.LevelWarn, "keel: unknown tool", slog.String("call_id", callID), slog.Int("name_bytes", nameBytes))
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
	sw         stopwatch
	argsDigest string
	result     ToolResult
}

func newCallRun(e *Executor, ctx context.Context, call ToolCall, tool *Tool, rec *CallRecord) *callRun {
	c := &callRun{e: e, ctx: ctx, call: call, tool: tool, info: &tool.info, rec: rec, sw: stopwatch{rec: rec}}
	if rec != nil {
		rec.Version = c.info.Version
		c.sw.last = rec.Start
	}
	return c
}

// fail stops the call with an executor code and a fixed message.
func (c *callRun) fail(code Code, msg string) ToolResult {
	c.result = ToolResult{CallID: c.call.ID, ToolName: c.info.Name, ToolVersion: &c.info.Version,
		Error: &ToolError{Code: code, Message: msg}}
	return c.result
}

func (c *callRun) log(level slog.Level, msg string, attrs ...slog.Attr) {
	c.e.log.LogAttrs(c.ctx, level, msg, append([]slog.Attr{slog.String("call_id", c.call.ID), slog.String("tool", c.info.Name)}, attrs...)...)
}

// digest is the canonical argument digest; it costs a re-encode, so only
// observers and approvals ask for it.
func (c *callRun) digest() string {
	if c.argsDigest == "" {
		c.argsDigest, _ = ArgumentsDigest(c.call.Arguments) // valid JSON: it passed the strict parse
	}
	return c.argsDigest
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

// input reads the arguments into the call the handler gets. A compiled
// tool's generated reader does it in one pass, checking the schema's
// keywords on the Go values; a hand-bound tool's arguments are parsed
// strictly, validated against the schema, then decoded.
func (c *callRun) input() (Call, bool) {
	if absent(c.call.Arguments) {
		// MCP makes arguments optional and models send null for "none":
		// the call is {} from here on, which a schema with a required
		// member still refuses.
		c.call.Arguments = []byte(`{}`) // its own: a policy may hold it
	}
	var call Call
	var err error
	if c.tool.compiled {
		call, err = readCompiled(c.tool.handler, c.call.Arguments, c.e.limits)
		c.sw.lap(stageDecode)
	} else {
		call, err = c.validatedInput()
	}
	if err != nil {
		c.log(slog.LevelInfo, "keel: invalid arguments", slog.Any("detail", err))
		r := c.fail(CodeInvalidArguments, msgInvalidArguments)
		if c.e.details {
			r.Error.Details = argumentDetails(err, c.tool.inputForDetails(), c.call.Arguments)
		}
		return nil, false
	}
	if c.rec != nil {
		c.rec.ArgumentsDigest = c.digest()
	}
	return call, true
}

// absent reports whether a call's arguments are none at all: empty, only
// JSON whitespace, or null.
func absent(args []byte) bool {
	if len(args) > 0 && !isJSONSpace(args[0]) && args[0] != 'n' { // the usual call: one byte looked at
		return false
	}
	trimmed := bytes.TrimFunc(args, func(r rune) bool { return r < utf8.RuneSelf && isJSONSpace(byte(r)) })
	return len(trimmed) == 0 || string(trimmed) == "null"
}

func isJSONSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// validatedInput is input for a hand-bound tool (Handle).
func (c *callRun) validatedInput() (Call, error) {
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

// validate runs the validator, which must not take the process down with
// it: a panic in it (math/big on a number it mishandles) refuses the call
// and is logged.
func (c *callRun) validate(s *jsonschema.Schema, doc any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log(slog.LevelError, "keel: the schema validator panicked; the call is refused", slog.Any("panic", p))
			err = &inputError{"json", fmt.Errorf("the validator panicked: %v", p)}
		}
	}()
	return s.Validate(doc)
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

// policy decides on a valid call. A call it sends for approval runs only
// with a grant for exactly this call.
func (c *callRun) policy(ec ExecutionContext, args Call) bool {
	e := c.e
	req := PolicyRequest{CallID: c.call.ID, Tool: *c.info, Context: ec, Arguments: c.call.Arguments}
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
		r.Error.Approval = &req
	}
	return false
}

func (c *callRun) approvalRequest() ApprovalRequest {
	return ApprovalRequest{Tool: c.info.Name, Version: c.info.Version, SetDigest: c.e.setDigest, CallID: c.call.ID, ArgumentsDigest: c.digest()}
}

// classify: a declared business failure keeps its code and message;
// everything else gets an executor code, and its detail is logged.
func (c *callRun) classify(err error) ToolResult {
	var biz *ToolExecutionError
	switch {
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
func (c *callRun) output(call Call) ([]byte, bool) {
	var out []byte
	var err error
	if c.tool.compiled {
		out, err = c.e.writeResult(call)
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

// encoders reuses result buffers; one grown past maxPooledResult is dropped.
var encoders = sync.Pool{New: func() any { return new(wire.Encoder) }}

const maxPooledResult = 64 << 10

// writeResult runs a compiled call's result writer; a panic in a method
// the result's types bring (MarshalText, IsZero) is an invalid result.
func (e *Executor) writeResult(call Call) (out []byte, err error) {
	enc := encoders.Get().(*wire.Encoder)
	enc.Reset(e.limits.MaxOutputBytes)
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("panic while writing the result: %v", p)
		}
		if cap(enc.Bytes()) <= maxPooledResult {
			encoders.Put(enc)
		}
	}()
	if err = call.Result(enc); err == nil {
		err = enc.Cap()
	}
	if err != nil {
		return nil, err
	}
	return bytes.Clone(enc.Bytes()), nil
}

// validatedOutput is output for a hand-bound tool (Handle).
func (c *callRun) validatedOutput(call encoder) ([]byte, error) {
	out, err := call.encode()
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	if len(out) > c.e.limits.MaxOutputBytes {
		return nil, fmt.Errorf("result is %d bytes, over the limit of %d", len(out), c.e.limits.MaxOutputBytes)
	}
	_, outSchema, _ := c.tool.schemas()
	res, err := parseObject(out, outputLimits(out))
	if err == nil {
		err = outSchema.Validate(res)
	}
	return out, err
}

// outputLimits: a handler's own result is bounded only by MaxOutputBytes.
func outputLimits(out []byte) Limits { return Limits{MaxArgumentBytes: len(out), MaxDepth: 10000} }

// errTimeout marks a handler that did not finish before the tool's deadline.
var errTimeout = errors.New("keel: handler deadline")

// errCancelled: the caller's context ended before the handler finished (a
// cancellation, or the caller's own deadline): not the tool's deadline.
var errCancelled = errors.New("keel: the caller cancelled")
