package runtime

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/keelgen/keel/internal/lockfile"
	"github.com/keelgen/keel/runtime/grant"
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
	outcomes  *outcomes
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
		if l.QuestionBrief > 0 {
			e.limits.QuestionBrief = l.QuestionBrief
		}
	}
}

// defaultTimeout bounds a handler whose tool declares no timeout= (WithDefaultTimeout sets another).
const defaultTimeout = 30 * time.Second

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
// not signed (keelgen -sign) by the private key of publicKeyPEM, the public
// key as keelgen -genkey writes it (PEM, "PUBLIC KEY"). A key that is not
// such a PEM ed25519 key fails NewExecutor.
func WithRequiredSignature(publicKeyPEM []byte) Option {
	return func(e *Executor) {
		pub, err := lockfile.ParsePublicKeyPEM(publicKeyPEM)
		if err != nil {
			e.refuse("WithRequiredSignature", "%v", err)
			return
		}
		e.signer = pub
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
	e := &Executor{set: set, policy: SideEffectPolicy{}, log: slog.Default(), limits: DefaultLimits(), timeout: defaultTimeout}
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
		if err := e.verifyTool(set, t, lockFile != nil); err != nil {
			return nil, err
		}
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

// verifyTool checks one tool the set lists and records it as verified: a
// handler, codes of its own, a hand-bound schema keel can read, schemas
// that compile (for a set without a lock), selected by its own name, listed
// once.
func (e *Executor) verifyTool(set ToolSet, t *Tool, locked bool) error {
	if t == nil {
		return errors.New("keel: the tool set lists a nil tool")
	}
	if t.handler == nil {
		return fmt.Errorf("keel: tool %s has no handler", t.info.Name)
	}
	if err := t.checkCodes(); err != nil {
		return fmt.Errorf("keel: tool %s: %w", t.info.Name, err)
	}
	if !t.compiled {
		if err := checkHandBound(t.info.InputSchema); err != nil {
			return fmt.Errorf("keel: tool %s: %w", t.info.Name, err)
		}
		if t.info.LaxNumbers {
			return fmt.Errorf("keel: tool %s: LaxNumbers needs keelgen's generated reader; a hand-bound tool's arguments are read as the schema says", t.info.Name)
		}
	}
	if t.info.NoTextCopy && t.untrusted {
		return fmt.Errorf("keel: tool %s: NoTextCopy and untrusted members: MCP's text block is the only copy of the result whose untrusted text the model reads between marks; drop one", t.info.Name)
	}
	if !locked {
		if _, _, err := t.schemas(); err != nil {
			return fmt.Errorf("keel: tool %s: %w", t.info.Name, err)
		}
	}
	if got := set.Lookup(t.info.Name); got != t {
		return fmt.Errorf("keel: tool %s is listed but not selected by its own name", t.info.Name)
	}
	if _, dup := e.verified[t]; dup {
		return fmt.Errorf("keel: tool %s is listed twice", t.info.Name)
	}
	e.verified[t] = struct{}{}
	e.scoped = e.scoped || len(t.info.Scopes) > 0
	return nil
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
	msgInputRequired    = "The tool needs answers from the client before it can finish; the call runs again with them."
	msgInputUnavailable = "The tool needs to ask the client something it cannot answer."
)

// Execute runs one call through the fixed order and returns its one result.
// Neither the call nor the handler can make it panic. Observers (the audit
// log, traces) see every call once, with its stage timings.
//
//	registered and visible? → scopes → rate → input schema →
//	recorded outcome → policy → handler → business or internal error →
//	output schema → result
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
	obs, ctx := e.begin(ctx, ec, call)
	r = e.execute(ctx, ec, call, obs)
	e.end(obs, r)
	return r
}

// begin starts an observed call: its record, and each observer's Begin.
func (e *Executor) begin(ctx context.Context, ec ExecutionContext, call ToolCall) (*observedCall, context.Context) {
	name := call.Name
	if len(name) > maxRecordedName { // an unknown name is the model's: bound what the log keeps
		name = name[:maxRecordedName] + "…"
	}
	obs := &observedCall{rec: CallRecord{CallID: call.ID, Tool: name, SetDigest: e.setDigest, Tenant: ec.Tenant, Principal: ec.Principal, Start: time.Now()}}
	if ec.Attempt != nil {
		obs.rec.Attempt = *ec.Attempt
	}
	obs.begun = obs.ctxs[:0]
	for _, o := range e.observers {
		ctx = o.Begin(ctx, call)
		obs.begun = append(obs.begun, ctx)
		t, ok := o.(stageTimer)
		obs.timed = obs.timed || !ok || t.TimesStages(ctx)
	}
	return obs, ctx
}

// end records r and calls each observer's End, last first.
func (e *Executor) end(obs *observedCall, r ToolResult) {
	rec := &obs.rec
	rec.Duration, rec.Code, rec.OK, rec.Untrusted = time.Since(rec.Start), r.Code(), r.OK, r.Untrusted
	for i := len(obs.begun) - 1; i >= 0; i-- {
		e.observers[i].End(obs.begun[i], rec)
	}
}

// observedCall is the state of an observed call, in one allocation: the
// record, the context each Begin returned (for the usual one or two
// observers), and the context the handler runs under.
type observedCall struct {
	rec     CallRecord
	timed   bool // an observer reads the record's Stages
	ctxs    [2]context.Context
	begun   []context.Context // the context each Begin returned: in ctxs for up to two
	handler callContext
}

// stageTimer is an Observer that says which calls it reads Stages of.
type stageTimer interface {
	TimesStages(ctx context.Context) bool
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

// fail stops the call with an executor code and a fixed message.
func (c *callRun) fail(code Code, msg string) ToolResult {
	c.result = ToolResult{CallID: c.call.ID, ToolName: c.info.Name, ToolVersion: &c.info.Version,
		Error: &ToolError{Code: code, Message: msg}}
	return c.result
}

func (c *callRun) log(level slog.Level, msg string, attrs ...slog.Attr) {
	c.e.log.LogAttrs(c.ctx, level, msg, append([]slog.Attr{slog.String("call_id", c.call.ID), slog.String("tool", c.info.Name)}, attrs...)...)
}

// digest is the canonical argument digest, computed once and only when
// asked for (by observers and approvals), and shared with the record.
func (c *callRun) digest() string {
	if c.rec != nil {
		return c.rec.ArgumentsDigest()
	}
	if c.argsDigest == "" {
		c.argsDigest, _ = grant.ArgumentsDigest(c.call.Arguments) // valid JSON: it passed the strict parse
	}
	return c.argsDigest
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

func (c *callRun) approvalRequest() ApprovalRequest {
	return ApprovalRequest{Tool: c.info.Name, Version: c.info.Version, SetDigest: c.e.setDigest, CallID: c.call.ID, ArgumentsDigest: c.digest()}
}

// encoders reuses the encoders, not their buffers: a result is written
// into a buffer of its own, sized by the tool's last result, and kept as
// it is, with no copy.
var encoders = sync.Pool{New: func() any { return new(wire.Encoder) }}

// writeResult runs a compiled call's result writer; a panic in a method
// the result's types bring (MarshalText, IsZero) is an invalid result.
func (e *Executor) writeResult(tool *Tool, call wire.Call) (out []byte, err error) {
	enc := encoders.Get().(*wire.Encoder)
	enc.ResetInto(make([]byte, 0, tool.resultSize.Load()), e.limits.MaxOutputBytes)
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("panic while writing the result: %v", p)
		}
		enc.ResetInto(nil, 0) // the buffer is the result's, or garbage
		encoders.Put(enc)
	}()
	if err = call.Result(enc); err == nil {
		err = enc.Cap()
	}
	if err != nil {
		return nil, err
	}
	out = enc.Bytes()
	tool.resultSize.Store(sizeHint(len(out)))
	return out, nil
}

// sizeHint is the buffer for a tool's next result after one of n bytes:
// enough for the same size, with some room, up to maxResultHint.
func sizeHint(n int) int32 {
	return int32(min(n+n/8+32, maxResultHint))
}

// maxResultHint bounds the buffer made up front; a larger result grows it.
const maxResultHint = 64 << 10

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
