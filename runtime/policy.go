package runtime

import (
	"context"
	"encoding"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/runtime/wire"
)

// Effect says whether a tool only reads or also changes the world.
type Effect string

const (
	EffectRead  Effect = "read"
	EffectWrite Effect = "write"
)

// ExecutionContext is what the harness, never the model, says about a call:
// who is calling and what they are allowed to do. Handlers can read it with
// ExecutionContextFrom.
type ExecutionContext struct {
	// AllowSideEffects lets tools with effect=write run under the default policy.
	AllowSideEffects bool
	// RateTaken says the caller's rate was taken for this call when the
	// server accepted it to run later (Executor.Admit, for an MCP task):
	// the executor does not take it again. Set it only for such a call,
	// never from anything a client sends.
	// (Beside AllowSideEffects, in its padding: the struct is copied into
	// each call's context, and its size is per-call bytes.)
	RateTaken bool
	// Principal and Tenant identify the caller for policies and logs.
	Principal string
	Tenant    string
	// Groups the principal belongs to, for policies (e.g. "oncall").
	Groups []string
	// Grant is an approval grant the harness presents for this call (see
	// grant.Issue). It lets a call run that the policy sent for approval, if
	// it matches the call exactly; it is used once.
	Grant string
	// Scopes are the OAuth scopes the caller's verified credentials grant
	// (mcpserver.TokenContext fills them from the token). A tool that
	// declares scopes runs only when all of its are here.
	Scopes []string
	// Attempt is set by a durable engine that may retry the call
	// (keeltemporal): where it runs and which try this is; nil otherwise.
	// The executor reads it before the handler runs and records a copy.
	Attempt *Attempt
	// Tainted, when set, is the conversation's mark that text from
	// outside the system entered it: the executor sets it after a result
	// that carried some (ToolResult.Untrusted), and a policy reads it
	// (SideEffectPolicy.ApproveAfterUntrusted). The harness keeps one per
	// conversation.
	Tainted *atomic.Bool
}

type execContextKey struct{}

// ExecutionContextFrom returns the ExecutionContext of the call that ctx
// belongs to.
func ExecutionContextFrom(ctx context.Context) (ExecutionContext, bool) {
	ec, ok := ctx.Value(execContextKey{}).(ExecutionContext)
	return ec, ok
}

// PolicyRequest is what a Policy decides on. It is built only for a
// registered tool whose arguments already passed the input schema.
type PolicyRequest struct {
	CallID  string
	Tool    ToolInfo
	Context ExecutionContext
	// Arguments are the validated arguments, as the model sent them.
	Arguments []byte
	// Value is the arguments as the handler will receive them: a pointer to
	// the decoded, checked argument value (a float already rounded to the Go
	// type's precision). A policy that compares numbers should judge this,
	// not the literal (cedarpolicy does). Nil when the call does not offer it.
	// To judge members as JSON, read ValueJSON.
	Value any

	call wire.Call // the checked call, which writes ValueJSON
}

// argumentValuer is a Call that offers its decoded argument value to the
// policy; generated calls and Handle's do.
type argumentValuer interface {
	Arguments() any
}

// argumentWriter is a Call that writes its checked argument value as
// JSON; generated calls do, each member as their reader accepted it.
type argumentWriter interface {
	WriteArguments(e *wire.Encoder) error
}

// ValueJSON is the arguments as the handler receives them, written as
// JSON: each member the value the generated reader accepted (a union as
// its one value, a Nullable as null or its value, a lax number as a
// number, a text type as its text, a float rounded to its Go type). A
// policy that judges members reads this, not Arguments (cedarpolicy
// does). It is written when asked, so a policy that never asks pays
// nothing; a call that offers no value gives Arguments.
func (r PolicyRequest) ValueJSON() ([]byte, error) {
	if w, ok := r.call.(argumentWriter); ok {
		var e wire.Encoder
		// The value is never much longer than what was read: a number
		// respelled, a text type's text.
		e.Reset(4*len(r.Arguments) + 4096)
		if err := w.WriteArguments(&e); err != nil {
			return nil, err
		}
		return e.Bytes(), e.Cap()
	}
	if r.Value != nil {
		return jsonv2.Marshal(r.Value, valueForm)
	}
	return r.Arguments, nil
}

// valueForm writes a decoded value (Handle's, or generated code's from
// before WriteArguments) in the JSON form keel reads it in: a
// time.Duration as its text ("2s"; json v2 has none by default), and a
// text type as its text, whatever JSON methods it also has. json v2 writes
// a nil pointer as null before either is called.
var valueForm = jsonv2.WithMarshalers(jsonv2.JoinMarshalers(
	jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, d time.Duration) error {
		return enc.WriteToken(jsontext.String(d.String()))
	}),
	jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, t encoding.TextMarshaler) error {
		text, err := t.MarshalText()
		if err != nil {
			return err
		}
		return enc.WriteToken(jsontext.String(string(text)))
	}),
))

// Decision is a policy's answer. Reason goes to the protected and audit
// logs only, never to the model.
type Decision struct {
	Allow bool
	// NeedsApproval, with Allow false, means a person may approve this exact
	// call: a matching grant lets it run (WithApprovals).
	NeedsApproval bool
	Reason        string
}

// Policy decides whether a validated call may run. Replace the default with
// WithPolicy; the executor's order stays the same.
type Policy interface {
	Decide(ctx context.Context, req PolicyRequest) Decision
}

// PolicyFunc adapts a function to Policy.
type PolicyFunc func(ctx context.Context, req PolicyRequest) Decision

func (f PolicyFunc) Decide(ctx context.Context, req PolicyRequest) Decision { return f(ctx, req) }

// SideEffectPolicy is the default policy: read tools always run; write tools
// run when the ExecutionContext allows side effects, and otherwise need
// approval. With ApproveAfterUntrusted, a write in a conversation that text
// from outside entered (ExecutionContext.Tainted) needs approval whatever
// the context allows: a page the model read may have told it to write.
type SideEffectPolicy struct {
	ApproveAfterUntrusted bool
}

func (p SideEffectPolicy) Decide(_ context.Context, req PolicyRequest) Decision {
	if req.Tool.Effect == EffectRead {
		return Decision{Allow: true, Reason: "read tool"}
	}
	if p.ApproveAfterUntrusted && req.Context.Tainted != nil && req.Context.Tainted.Load() {
		return Decision{NeedsApproval: true, Reason: "write after untrusted content entered the conversation"}
	}
	if req.Context.AllowSideEffects {
		return Decision{Allow: true, Reason: "side effects allowed by execution context"}
	}
	return Decision{NeedsApproval: true, Reason: "write tool without AllowSideEffects"}
}
