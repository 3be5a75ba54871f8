package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/keelgen/keel/runtime"
)

// A call the policy sends for approval whose client is not asked (it
// cannot be: a client of an older revision without a session, a client
// that takes no elicitation; or Approvals.Ask keeps it from the client)
// waits for an approver at the approval page (ApprovalPage). keel records
// it as a PendingApproval and answers the call approval_required with the
// page's address for it; an approver approves or denies it there, and the
// same call, sent again, runs once with the grant the approval became.

// PendingApproval is one call waiting for an approver.
type PendingApproval struct {
	ID string // random; the page's address for it
	// Key is what a call sent again is matched by: its caller (tenant and
	// principal), tool set, tool, version and arguments, digested.
	Key       string
	Request   runtime.ApprovalRequest // the call, and its question
	Tenant    string
	Principal string
	Created   time.Time
	Expires   time.Time
	// Decision is "" while it waits, then "approved" or "denied", once;
	// Approver is who decided, and Grant the grant an approval became.
	Decision string
	Approver string
	Grant    string
	// Used: the approved call ran (its grant was handed to it).
	Used bool
}

// PendingStore keeps pending approvals where every replica reads them.
// NewMemoryPending is one process's.
type PendingStore interface {
	// Pending records p, or returns the approval that waits already for the
	// same call (p.Key): a call sent twice before anyone decided is one
	// approval.
	Pending(ctx context.Context, p PendingApproval) (PendingApproval, error)
	// Approval returns approval id, or ErrNoApproval.
	Approval(ctx context.Context, id string) (PendingApproval, error)
	// Decide records decision on approval id once: false when it was
	// decided before (or expired); the approval as it then is.
	Decide(ctx context.Context, id, decision, approver, grant string) (PendingApproval, bool, error)
	// TakeApproved returns the approved, unused approval of key and marks
	// it used, once: false when there is none.
	TakeApproved(ctx context.Context, key string) (PendingApproval, bool, error)
	// Waiting lists the undecided, unexpired approvals, oldest first, at
	// most max of them.
	Waiting(ctx context.Context, max int) ([]PendingApproval, error)
}

// ErrNoApproval is a PendingStore's answer for an approval it does not
// hold (never made, or expired).
var ErrNoApproval = errors.New("mcpserver: no such approval")

// pendingKey is the key of a caller's call: each part length-prefixed, so
// no two callers' calls share one.
func pendingKey(tenant, principal string, req runtime.ApprovalRequest) string {
	h := sha256.New()
	for _, part := range []string{tenant, principal, req.SetDigest, req.Tool, req.Version, req.ArgumentsDigest} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// MemoryPending is a PendingStore in one process's memory, for one
// replica: at most maxPending unexpired approvals; past that a new one is
// refused (the call stays approval_required, without an address).
type MemoryPending struct {
	mu    sync.Mutex
	byID  map[string]*PendingApproval
	byKey map[string]string // key → the id of its latest approval
	now   func() time.Time
}

const maxPending = 1 << 14

// NewMemoryPending returns an empty store.
func NewMemoryPending() *MemoryPending {
	return &MemoryPending{byID: map[string]*PendingApproval{}, byKey: map[string]string{}, now: time.Now}
}

var errPendingFull = errors.New("mcpserver: the memory approval store is full")

// Pending records p, or returns the one waiting for p's call.
func (s *MemoryPending) Pending(_ context.Context, p PendingApproval) (PendingApproval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if id, ok := s.byKey[p.Key]; ok {
		if q := s.byID[id]; q != nil && q.Decision == "" && now.Before(q.Expires) {
			return *q, nil
		}
	}
	if len(s.byID) >= maxPending {
		s.sweep(now)
		if len(s.byID) >= maxPending {
			return PendingApproval{}, errPendingFull
		}
	}
	s.byID[p.ID] = &p
	s.byKey[p.Key] = p.ID
	return p, nil
}

func (s *MemoryPending) sweep(now time.Time) {
	for id, p := range s.byID {
		if !now.Before(p.Expires) {
			delete(s.byID, id)
			if s.byKey[p.Key] == id {
				delete(s.byKey, p.Key)
			}
		}
	}
}

// Approval returns approval id.
func (s *MemoryPending) Approval(_ context.Context, id string) (PendingApproval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.byID[id]
	if p == nil || !s.now().Before(p.Expires) {
		return PendingApproval{}, ErrNoApproval
	}
	return *p, nil
}

// Decide records a decision once.
func (s *MemoryPending) Decide(_ context.Context, id, decision, approver, grant string) (PendingApproval, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.byID[id]
	if p == nil || !s.now().Before(p.Expires) {
		return PendingApproval{}, false, ErrNoApproval
	}
	if p.Decision != "" {
		return *p, false, nil
	}
	p.Decision, p.Approver, p.Grant = decision, approver, grant
	return *p, true, nil
}

// TakeApproved hands out the approved approval of key once.
func (s *MemoryPending) TakeApproved(_ context.Context, key string) (PendingApproval, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.byID[s.byKey[key]]
	if p == nil || p.Decision != "approved" || p.Used || !s.now().Before(p.Expires) {
		return PendingApproval{}, false, nil
	}
	p.Used = true
	return *p, true, nil
}

// Waiting lists the undecided approvals, oldest first.
func (s *MemoryPending) Waiting(_ context.Context, max int) ([]PendingApproval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var out []PendingApproval
	for _, p := range s.byID {
		if p.Decision == "" && now.Before(p.Expires) {
			out = append(out, *p)
		}
	}
	slices.SortFunc(out, func(a, b PendingApproval) int { return a.Created.Compare(b.Created) })
	if len(out) > max {
		out = out[:max]
	}
	return out, nil
}
