// Package approvalstore is where calls wait for an approver at keel's MCP
// approval page (mcpserver.ApprovalPage) between the call that asked and
// the decision: the Store contract mcpserver.Approvals keeps them in, the
// Approval it keeps, and Memory, one process's store. A store shared by
// replicas (redisapprovals' on Redis) implements Store and needs nothing
// else of mcpserver.
package approvalstore

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

// Approval is one call waiting for an approver.
type Approval struct {
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

// Store keeps the approvals where every replica reads them. NewMemory is
// one process's.
type Store interface {
	// Pending records p, or returns the approval that waits already for the
	// same call (p.Key): a call sent twice before anyone decided is one
	// approval.
	Pending(ctx context.Context, p Approval) (Approval, error)
	// Approval returns approval id, or ErrNoApproval.
	Approval(ctx context.Context, id string) (Approval, error)
	// Decide records decision on approval id once: false when it was
	// decided before (or expired); the approval as it then is.
	Decide(ctx context.Context, id, decision, approver, grant string) (Approval, bool, error)
	// TakeApproved returns the approved, unused approval of key and marks
	// it used, once: false when there is none.
	TakeApproved(ctx context.Context, key string) (Approval, bool, error)
	// Waiting lists the undecided, unexpired approvals, oldest first, at
	// most max of them.
	Waiting(ctx context.Context, max int) ([]Approval, error)
}

// ErrNoApproval is a Store's answer for an approval it does not
// hold (never made, or expired).
var ErrNoApproval = errors.New("approvalstore: no such approval")

// Key is the key of a caller's call (Approval.Key): each part
// length-prefixed, so no two callers' calls share one.
func Key(tenant, principal string, req runtime.ApprovalRequest) string {
	h := sha256.New()
	for _, part := range []string{tenant, principal, req.SetDigest, req.Tool, req.Version, req.ArgumentsDigest} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Memory is a Store in one process's memory, for one
// replica: at most maxMemory unexpired approvals; past that a new one is
// refused (the call stays approval_required, without an address).
type Memory struct {
	mu    sync.Mutex
	byID  map[string]*Approval
	byKey map[string]string // key → the id of its latest approval
	now   func() time.Time
}

const maxMemory = 1 << 14

// NewMemory returns an empty store.
func NewMemory() *Memory {
	return &Memory{byID: map[string]*Approval{}, byKey: map[string]string{}, now: time.Now}
}

var errFull = errors.New("approvalstore: the memory store is full")

// Pending records p, or returns the one waiting for p's call.
func (s *Memory) Pending(_ context.Context, p Approval) (Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if id, ok := s.byKey[p.Key]; ok {
		if q := s.byID[id]; q != nil && q.Decision == "" && now.Before(q.Expires) {
			return *q, nil
		}
	}
	if len(s.byID) >= maxMemory {
		s.sweep(now)
		if len(s.byID) >= maxMemory {
			return Approval{}, errFull
		}
	}
	s.byID[p.ID] = &p
	s.byKey[p.Key] = p.ID
	return p, nil
}

func (s *Memory) sweep(now time.Time) {
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
func (s *Memory) Approval(_ context.Context, id string) (Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.byID[id]
	if p == nil || !s.now().Before(p.Expires) {
		return Approval{}, ErrNoApproval
	}
	return *p, nil
}

// Decide records a decision once.
func (s *Memory) Decide(_ context.Context, id, decision, approver, grant string) (Approval, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.byID[id]
	if p == nil || !s.now().Before(p.Expires) {
		return Approval{}, false, ErrNoApproval
	}
	if p.Decision != "" {
		return *p, false, nil
	}
	p.Decision, p.Approver, p.Grant = decision, approver, grant
	return *p, true, nil
}

// TakeApproved hands out the approved approval of key once.
func (s *Memory) TakeApproved(_ context.Context, key string) (Approval, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.byID[s.byKey[key]]
	if p == nil || p.Decision != "approved" || p.Used || !s.now().Before(p.Expires) {
		return Approval{}, false, nil
	}
	p.Used = true
	return *p, true, nil
}

// Waiting lists the undecided approvals, oldest first.
func (s *Memory) Waiting(_ context.Context, max int) ([]Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var out []Approval
	for _, p := range s.byID {
		if p.Decision == "" && now.Before(p.Expires) {
			out = append(out, *p)
		}
	}
	slices.SortFunc(out, func(a, b Approval) int { return a.Created.Compare(b.Created) })
	if len(out) > max {
		out = out[:max]
	}
	return out, nil
}
