package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/keelgen/keel/internal/execinfo"
	"github.com/keelgen/keel/runtime/grant"
)

// ApprovalRequest identifies exactly one call for a person to approve: the
// tool and version, the tool set, the call, and the SHA-256 of its canonical
// arguments. It travels in an approval_required result's error.approval.
type ApprovalRequest struct {
	Tool            string `json:"tool"`
	Version         string `json:"version"`
	SetDigest       string `json:"set_digest,omitempty"`
	CallID          string `json:"call_id"`
	ArgumentsDigest string `json:"arguments_digest"`
	// Question is what a person reads to approve the call: the tool's own
	// wording, then the tool and the whole call, every value whole (text
	// of several lines as its lines), rendered from its checked arguments
	// with every character that could hide or reorder text escaped
	// visibly: the text keel's approval page shows. It is not in the JSON
	// the model reads, which has the call already.
	Question string `json:"-"`
	// Brief is Question for a place that must be short (an MCP client's
	// message, a task's question): a string past Limits.QuestionBrief
	// characters, or a list past 50 items, is shown by its start, its size
	// and its digest, and it says so. Equal to Question when nothing was
	// cut.
	Brief string `json:"-"`
	// URL is where a person approves the call when its client is not
	// asked (keel's MCP approval page); "" when there is none. It names the
	// approval, never a value of the call.
	URL string `json:"url,omitempty"`
}

// Grant is the grant that approves exactly this request for one principal
// of one tenant until expires: fill nothing by hand that the request says.
func (r ApprovalRequest) Grant(tenant, principal string, expires time.Time) grant.Grant {
	return grant.Grant{Tenant: tenant, Principal: principal, SetDigest: r.SetDigest, CallID: r.CallID,
		Tool: r.Tool, Version: r.Version, ArgumentsDigest: r.ArgumentsDigest, Expires: expires}
}

// ReplayStore makes grants single-use and remembers which call redeemed
// each. RedeemCall records nonce for callID until expires: it returns true
// the first time, and, with retry, again for the same callID, so that a
// durable engine's later try of that call (an ExecutionContext whose
// Attempt.Number is above 1) may run; false otherwise. A store that cannot
// decide returns an error, and the grant is refused. memstore's
// ReplayStore and redisreplay's Store are both.
//
// A store that also has Memory(ctx) (string, error) names its memory: the
// same name until it loses what it recorded (a Redis restarted empty), a
// new one from then on (redisreplay's does). A grant issued under one name
// (grant.Grant.Memory) is refused under another, since its marker may be
// gone; one that names a memory is refused by a store that names none.
type ReplayStore interface {
	RedeemCall(ctx context.Context, nonce, callID string, retry bool, expires time.Time) (bool, error)
}

// memoryStore is a ReplayStore that names its memory (ReplayStore's
// comment): redisreplay.Store is one.
type memoryStore interface {
	Memory(ctx context.Context) (string, error)
}

// errMemoryLost is a grant issued before its replay store lost its memory.
var errMemoryLost = errors.New("issued before the replay store lost its memory")

// approvals is an executor's grant checking.
type approvals struct {
	key   grant.Key
	store ReplayStore
}

// WithApprovals lets a call the policy sent for approval run when the
// ExecutionContext presents a grant, signed with key, that matches it
// exactly (tenant, principal, tool set, call id, tool, version, argument
// digest, not expired) and that store has not seen. Approval_required
// results then carry the ApprovalRequest to show a person. A nil or weak
// key, or a nil store, fails NewExecutor.
func WithApprovals(key grant.Key, store ReplayStore) Option {
	return func(e *Executor) {
		switch err := grant.Check(key); {
		case err != nil:
			e.refuse("WithApprovals", "%v", err)
		case store == nil:
			e.refuse("WithApprovals", "the replay store is nil")
		default:
			e.approvals = &approvals{key: key, store: store}
		}
	}
}

// The MCP server spends each answer to an approval question in the
// executor's replay store, which the runtime does not export: execinfo is a
// leaf runtime imports, so its hook takes and returns any.
func init() {
	execinfo.Replay = func(exec any) any {
		if a := exec.(*Executor).approvals; a != nil {
			return a.store
		}
		return nil
	}
}

// redeem checks a presented grant against the call and uses it up.
func (a *approvals) redeem(ctx context.Context, ec ExecutionContext, call ApprovalRequest) error {
	g, err := grant.Parse(a.key, ec.Grant)
	if err != nil {
		return err
	}
	switch {
	case g.Tenant != ec.Tenant || g.Principal != ec.Principal:
		return errors.New("grant: for another tenant or principal")
	case g.SetDigest != call.SetDigest:
		return errors.New("grant: for another tool set")
	case g.CallID != call.CallID:
		return errors.New("grant: for another call")
	case g.Tool != call.Tool || g.Version != call.Version:
		return errors.New("grant: for another tool or version")
	case g.ArgumentsDigest != call.ArgumentsDigest:
		return errors.New("grant: for other arguments")
	case !time.Now().Before(g.Expires):
		return errors.New("grant: expired")
	}
	if g.Memory != "" { // a store that cannot name its memory cannot tell: the grant is refused
		ms, ok := a.store.(memoryStore)
		if !ok {
			return fmt.Errorf("grant: %w: the store names none", errMemoryLost)
		}
		m, err := ms.Memory(ctx)
		if err != nil {
			return fmt.Errorf("grant: replay store: %w", err)
		}
		if m != g.Memory {
			return fmt.Errorf("grant: %w", errMemoryLost)
		}
	}
	ok, err := a.store.RedeemCall(ctx, g.Nonce, g.CallID, ec.Attempt.retry(), g.Expires)
	if err != nil {
		return fmt.Errorf("grant: replay store: %w", err)
	}
	if !ok {
		return errors.New("grant: already used")
	}
	return nil
}
