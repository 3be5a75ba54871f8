package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Attempt identifies one try of a call that a durable execution engine
// runs and may retry elsewhere (keeltemporal fills it from the activity):
// the execution it belongs to and which try this is. The executor records
// it beside the call id (CallRecord.Attempt: the audit log, traces), and a
// try after the first may redeem again the grant an earlier try of the same
// call redeemed (ReplayStore.RedeemCall).
//
// Only the harness sets it, never from anything a model or a client sent:
// a claimed retry lets a grant through a second time for its one call.
type Attempt struct {
	// Engine names the engine ("temporal").
	Engine string
	// WorkflowID, RunID and ActivityID say where the call runs; the same
	// on every try of it.
	WorkflowID string
	RunID      string
	ActivityID string
	// Number counts the tries, 1 for the first.
	Number int
}

// retry reports whether a is a later try of a call.
func (a *Attempt) retry() bool { return a != nil && a.Number > 1 }

type callContextKey struct{}

// IdempotencyKey is the key of the call a handler runs for: the same on
// every try of one call (a retry after a timeout, a worker lost mid-call),
// different for another call id, tool, principal or tenant. A handler
// whose side effect must happen once records it under this key, and on a
// retry finds it done (docs/durable.md). It is "" outside a handler.
func IdempotencyKey(ctx context.Context) string {
	c, ok := ctx.Value(callContextKey{}).(*callContext)
	if !ok {
		return ""
	}
	return keyDigest(c.ec.Tenant, c.ec.Principal, c.tool.Name, c.callID)
}

// keyDigest is the SHA-256 of a call's parts, each with its length, so no
// two calls' parts run together alike.
func keyDigest(tenant, principal, tool, callID string) string {
	h := sha256.New()
	for _, part := range [...]string{tenant, principal, tool, callID} {
		h.Write(binary.AppendUvarint(nil, uint64(len(part))))
		h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil))
}
