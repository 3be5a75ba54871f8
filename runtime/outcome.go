package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"
)

// OutcomeStore keeps what a write call did under its idempotency key, so a
// retried call (the same call id, tool, caller and arguments) is answered
// with its first outcome instead of running again (WithOutcomes). A key
// holds a running call's claim (Result nil) or its recorded result; both
// vanish at Until. memstore's OutcomeStore and redisreplay's Store are
// both; give replicas the Redis one.
type OutcomeStore interface {
	// Claim stores claim under key when the key holds nothing, and
	// returns nil; otherwise it stores nothing and returns what the key
	// holds. With takeover, a running claim of the same Digest is replaced
	// all the same (a durable engine's later try of the call).
	Claim(ctx context.Context, key string, claim Outcome, takeover bool) (*Outcome, error)
	// Finish ends the claim token holds on key: its result is kept until
	// until, or, with a nil result, the key is cleared. A key that no
	// longer holds token's claim is left as it is.
	Finish(ctx context.Context, key, token string, result []byte, until time.Time) error
}

// Outcome is what an OutcomeStore keeps under a key.
type Outcome struct {
	Token  string    // the claim's holder, random per try
	Digest string    // the call's argument digest (grant.ArgumentsDigest)
	Until  time.Time // a claim's lease, a result's expiry
	Result []byte    // the recorded result; nil while the call runs
}

// defaultOutcomeKeep is how long WithOutcomes keeps a result when it is
// given no other time.
const defaultOutcomeKeep = 24 * time.Hour

// outcomes is an executor's idempotency: its store and how long it keeps
// a result.
type outcomes struct {
	store OutcomeStore
	keep  time.Duration
}

// WithOutcomes makes every call of a write tool idempotent by its call id:
// before the policy, the executor claims the key (tenant, principal,
// tool, call id) in store; a call sent again with the same key and the
// same arguments gets the first call's result without running anything,
// the same key with other arguments is call_id_reused, and one sent while
// the first runs is call_in_progress. A result, a declared business
// error and invalid_tool_output are kept for keep (0: 24 hours); a
// tool_timeout holds the key until its lease ends (the handler may still
// run); every other end (a refusal, approval_required, input_required,
// tool_internal_error, tool_cancelled by a handler that returned its
// context's error or never started) clears the key, so the call may run
// again. A caller that leaves does not end a claimed write: the executor
// waits for its handler, within its deadline, and records what it did.
// A store that cannot answer refuses
// the write as idempotency_unchecked. A nil store, or a negative keep,
// fails NewExecutor.
func WithOutcomes(store OutcomeStore, keep time.Duration) Option {
	return func(e *Executor) {
		switch {
		case store == nil:
			e.refuse("WithOutcomes", "the outcome store is nil")
		case keep < 0:
			e.refuse("WithOutcomes", "keep %v is negative", keep)
		default:
			if keep == 0 {
				keep = defaultOutcomeKeep
			}
			e.outcomes = &outcomes{store: store, keep: keep}
		}
	}
}

// Messages of the recorded-outcome stage, written for the model.
const (
	msgCallInProgress = "This call id is running now; nothing was run again. Try again in %d s for its result."
	msgCallIDReused   = "This call id was used for a call with other arguments; nothing was run. Use a new call id for a new call."
	msgOutcomeUnknown = "Whether this call already ran could not be checked; nothing was run. Try again in 1 s."
)

// leaseGrace is how long a claim outlives its handler's deadline: a
// replica that died mid-call holds its key no longer than this after.
const leaseGrace = 10 * time.Second

// claim is a call's hold on its key.
type claim struct {
	key, token string
}

// newToken names one try's claim.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// timeout is the handler's bound.
func (c *callRun) timeout() time.Duration {
	if c.info.Timeout > 0 {
		return c.info.Timeout
	}
	return c.e.timeout
}

// outcomeKey is the call's IdempotencyKey.
func outcomeKey(tenant, principal, tool, callID string) string {
	return keyDigest(tenant, principal, tool, callID)
}

// recorded is a ToolResult as an OutcomeStore keeps it: every field,
// those the model's JSON leaves out too.
type recorded struct {
	ToolResult
	Text      string   `json:"text,omitempty"`
	Untrusted []string `json:"untrusted,omitempty"`
}

func recordOutcome(r ToolResult) ([]byte, error) {
	return json.Marshal(recorded{ToolResult: r, Text: r.Text, Untrusted: r.Untrusted})
}

func readOutcome(b []byte) (ToolResult, error) {
	var rec recorded
	if err := json.Unmarshal(b, &rec); err != nil {
		return ToolResult{}, err
	}
	if rec.ToolVersion == nil || (!rec.OK && rec.Error == nil) {
		return ToolResult{}, errors.New("not a recorded result")
	}
	r := rec.ToolResult
	r.Text, r.Untrusted = rec.Text, rec.Untrusted
	return r, nil
}
