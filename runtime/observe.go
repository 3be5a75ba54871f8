package runtime

import (
	"context"
	"log/slog"
	"time"
)

// CallRecord is what observers see of one finished call: who called what,
// under which tool set, with which arguments (by digest), what the policy
// decided, and how it ended. It never holds the arguments themselves.
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
	// ArgumentsDigest is the SHA-256 of the canonical arguments, "" when
	// they were not valid.
	ArgumentsDigest string
	// Decision is "allow", "deny", "approval_required", "approved" (by a
	// grant), or "" when the call never reached the policy.
	Decision     string
	PolicyReason string
	Code         Code // "" on success
	OK           bool
	Start        time.Time
	Duration     time.Duration
	Stages       StageTimes
	// Content describes the result's content blocks (kind, MIME type,
	// size), never their bytes; nil when there are none.
	Content []ContentRecord
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

// Observer sees every call: Begin when it arrives (the returned context is
// the one the handler gets, so spans nest), then the end func once, with
// the record, when the result is ready.
type Observer interface {
	Begin(ctx context.Context, call ToolCall) (context.Context, func(*CallRecord))
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
// record it does nothing, not even read the clock.
type stopwatch struct {
	rec  *CallRecord
	last time.Time
}

func (s *stopwatch) lap(stage int) {
	if s.rec == nil {
		return
	}
	now := time.Now()
	d := now.Sub(s.last)
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
// a durable engine runs, its workflow, run and activity ids and attempt.
func AuditLog(logger *slog.Logger) Observer { return auditLog{logger} }

type auditLog struct{ log *slog.Logger }

func (a auditLog) Begin(ctx context.Context, _ ToolCall) (context.Context, func(*CallRecord)) {
	return ctx, func(r *CallRecord) {
		code := string(r.Code)
		if r.OK {
			code = "ok"
		}
		attrs := []slog.Attr{
			slog.String("call_id", r.CallID), slog.String("tool", r.Tool), slog.String("version", r.Version),
			slog.String("set_digest", r.SetDigest), slog.String("tenant", r.Tenant), slog.String("principal", r.Principal),
			slog.String("arguments_digest", r.ArgumentsDigest), slog.String("decision", r.Decision),
			slog.String("policy_reason", r.PolicyReason), slog.String("code", code), slog.Duration("duration", r.Duration)}
		if a := r.Attempt; a.Engine != "" {
			attrs = append(attrs, slog.String("engine", a.Engine), slog.String("workflow_id", a.WorkflowID),
				slog.String("run_id", a.RunID), slog.String("activity_id", a.ActivityID), slog.Int("attempt", a.Number))
		}
		if len(r.Content) > 0 {
			// Kinds, types and sizes: what a reviewer needs, never the bytes.
			blocks := make([]any, len(r.Content))
			for i, c := range r.Content {
				blocks[i] = map[string]any{"type": string(c.Kind), "mime_type": c.MIMEType, "bytes": c.Bytes}
			}
			attrs = append(attrs, slog.Any("content", blocks))
		}
		a.log.LogAttrs(ctx, slog.LevelInfo, "keel.call", attrs...)
	}
}
