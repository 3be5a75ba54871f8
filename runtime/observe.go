package runtime

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/runtime/grant"
)

// CallRecord is what observers see of one finished call: who called what,
// under which tool set, with which arguments (by digest), what the policy
// decided, and how it ended. It never shows the arguments themselves.
// Observers read it in End; one that keeps it past that reads
// ArgumentsDigest there first.
type CallRecord struct {
	CallID    string
	Tool      string // as the call named it, also when unknown
	Version   string // "" for an unknown tool
	SetDigest string
	Tenant    string
	Principal string
	// Attempt is the durable execution and try the call ran as
	// (ExecutionContext.Attempt), zero outside one: with the call id, it
	// follows a call across retries and workers.
	Attempt Attempt
	// Decision is "allow", "deny", "approval_required", "approved" (by a
	// grant), "recorded" (a write sent again, answered with its recorded
	// outcome: WithOutcomes), or "" when the call never reached the policy.
	Decision     string
	PolicyReason string
	// Refusal says why a door refused the message before the executor read
	// a call from it (Executor.Refused; Code is then CodeRefusedMessage),
	// "" for every call the order ran.
	Refusal string
	// Untrusted are the JSON pointers of the result's text from outside the
	// system (ToolResult.Untrusted): the call tainted its conversation.
	Untrusted []string
	Code      Code // "" on success
	OK        bool
	Start     time.Time
	Duration  time.Duration
	Stages    StageTimes // zero unless an observer asked (Observer)
	// Content describes the result's content blocks (kind, MIME type,
	// size), never their bytes; nil when there are none.
	Content []ContentRecord

	args   []byte // the valid arguments, nil when they were not valid
	digest string // of args, once asked for
}

// ArgumentsDigest is the digest of the call's arguments a grant binds
// (grant.ArgumentsDigest), "" when they were not valid. It is computed the
// first time anything asks, an observer or the approval check, and once.
func (r *CallRecord) ArgumentsDigest() string {
	if r.digest == "" && r.args != nil {
		r.digest, _ = grant.ArgumentsDigest(r.args) // valid JSON: it passed the strict parse
	}
	return r.digest
}

// ContentRecord is what the audit records of one content block.
type ContentRecord struct {
	Kind     ContentKind
	MIMEType string
	Bytes    int
}

// StageTimes splits a call's duration by stage of the fixed order.
type StageTimes struct {
	Decode, Validate, Policy, Handler, Output time.Duration
}

// Observer sees every call: Begin when it arrives, then End once, with the
// record, when the result is ready.
//
// The record's Stages cost a clock reading per stage. An observer that
// reads them only for some calls (a tracer, for spans that record) also
// has a method TimesStages(ctx context.Context) bool, asked with the
// context its Begin returned; one without it has them for every call.
type Observer interface {
	// Begin returns the context the handler gets (so spans nest), which
	// End is given back.
	Begin(ctx context.Context, call ToolCall) context.Context
	End(ctx context.Context, rec *CallRecord)
}

// WithObserver adds an observer. Without any, the executor records nothing
// and takes no timestamps.
func WithObserver(o Observer) Option {
	return func(e *Executor) {
		if o == nil {
			e.refuse("WithObserver", "the observer is nil")
			return
		}
		e.observers = append(e.observers, o)
	}
}

const (
	stageDecode = iota
	stageValidate
	stagePolicy
	stageHandler
	stageOutput
)

// stopwatch adds the time since its last lap to a stage of rec; with no
// record (no observer, or none that times stages) it does nothing, not even
// read the clock. It reads only the
// monotonic clock (time.Since of rec.Start), half the cost of time.Now.
type stopwatch struct {
	rec  *CallRecord
	last time.Duration // since rec.Start
}

// now is the time of the last lap, without reading the clock again; with
// no record, the time.
func (s *stopwatch) now() time.Time {
	if s.rec == nil {
		return time.Now()
	}
	return s.rec.Start.Add(s.last)
}

func (s *stopwatch) lap(stage int) {
	if s.rec == nil {
		return
	}
	now := time.Since(s.rec.Start)
	d := now - s.last
	s.last = now
	st := &s.rec.Stages
	switch stage {
	case stageDecode:
		st.Decode += d
	case stageValidate:
		st.Validate += d
	case stagePolicy:
		st.Policy += d
	case stageHandler:
		st.Handler += d
	default:
		st.Output += d
	}
}

// AuditLog writes one structured record per call to logger: call_id, tool,
// version, set digest, tenant, principal, argument digest (never the
// arguments), decision, policy reason, result code and duration; for a call
// a durable engine runs, its workflow, run and activity ids and attempt;
// for a message a door refused, the refusal.
func AuditLog(logger *slog.Logger) Observer { return auditLog{logger} }

type auditLog struct{ log *slog.Logger }

func (a auditLog) Begin(ctx context.Context, _ ToolCall) context.Context { return ctx }

// TimesStages: the audit record has the duration, not the stages.
func (a auditLog) TimesStages(context.Context) bool { return false }

func (a auditLog) End(ctx context.Context, r *CallRecord) {
	if !a.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	code := string(r.Code)
	if r.OK {
		code = "ok"
	}
	attrs := []slog.Attr{
		slog.String("call_id", r.CallID), slog.String("tool", r.Tool), slog.String("version", r.Version),
		slog.String("set_digest", r.SetDigest), slog.String("tenant", r.Tenant), slog.String("principal", r.Principal),
		slog.String("arguments_digest", r.ArgumentsDigest()), slog.String("decision", r.Decision),
		slog.String("policy_reason", r.PolicyReason), slog.String("code", code), slog.Duration("duration", r.Duration)}
	if r.Refusal != "" {
		attrs = append(attrs, slog.String("refusal", r.Refusal))
	}
	if len(r.Untrusted) > 0 {
		attrs = append(attrs, slog.Any("untrusted", r.Untrusted))
	}
	if a := r.Attempt; a.Engine != "" {
		attrs = append(attrs, slog.String("engine", a.Engine), slog.String("workflow_id", a.WorkflowID),
			slog.String("run_id", a.RunID), slog.String("activity_id", a.ActivityID), slog.Int("attempt", a.Number))
	}
	if len(r.Content) > 0 {
		attrs = append(attrs, slog.Any("content", contentAudit(r.Content)))
	}
	a.log.LogAttrs(ctx, slog.LevelInfo, "keel.call", attrs...)
}

// contentAudit is the audit's list of content blocks: kinds, types and
// sizes, what a reviewer needs, never the bytes. It writes its own JSON.
type contentAudit []ContentRecord

func (c contentAudit) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, r := range c {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"bytes":`...)
		b = strconv.AppendInt(b, int64(r.Bytes), 10)
		b = append(b, `,"mime_type":`...)
		b, _ = jsontext.AppendQuote(b, r.MIMEType) // invalid UTF-8 is written as U+FFFD
		b = append(b, `,"type":`...)
		b, _ = jsontext.AppendQuote(b, string(r.Kind))
		b = append(b, '}')
	}
	return append(b, ']'), nil
}
