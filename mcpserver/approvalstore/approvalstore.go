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
	"strconv"
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
	// approval. It refuses a new one (ErrCallerFull) while MaxPerCaller of
	// p's caller (tenant and principal) wait, so that one caller cannot
	// fill the store every caller shares.
	Pending(ctx context.Context, p Approval) (Approval, error)
	// Approval returns approval id, or ErrNoApproval.
	Approval(ctx context.Context, id string) (Approval, error)
	// Decide records decision on approval id once: false when it was
	// decided before (or expired); the approval as it then is.
	Decide(ctx context.Context, id, decision, approver, grant string) (Approval, bool, error)
	// TakeApproved returns the approved, unused approval of key and marks
	// it used, once: false when there is none.
	TakeApproved(ctx context.Context, key string) (Approval, bool, error)
	// Waiting lists the undecided, unexpired approvals of tenant's callers,
	// oldest first, at most max of them, from an index of that tenant's:
	// another tenant's callers, however many they are, take none of the
	// list.
	Waiting(ctx context.Context, tenant string, max int) ([]Approval, error)
}

// ErrNoApproval is a Store's answer for an approval it does not
// hold (never made, or expired).
var ErrNoApproval = errors.New("approvalstore: no such approval")

// ErrCallerFull is Pending's answer when MaxPerCaller approvals of one
// caller wait: the call stays approval_required, without an address.
var ErrCallerFull = errors.New("approvalstore: as many of this caller's calls wait as a caller may have waiting")

// MaxPerCaller bounds the approvals one caller (tenant and principal) has
// waiting at once, in every store keel ships.
const MaxPerCaller = 256

// Caller is the key of one caller, its tenant and principal
// length-prefixed, for a store's per-caller index.
func Caller(tenant, principal string) string {
	return strconv.Itoa(len(tenant)) + ":" + tenant + principal
}

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
	mu       sync.Mutex
	byID     map[string]*Approval
	byKey    map[string]string              // key → the id of its latest approval
	byTenant map[string]map[string]struct{} // tenant → the ids of its callers' undecided approvals
	byCaller map[string]map[string]struct{} // Caller → the ids of its undecided approvals
	now      func() time.Time
}

const maxMemory = 1 << 14

// NewMemory returns an empty store.
func NewMemory() *Memory {
	return &Memory{byID: map[string]*Approval{}, byKey: map[string]string{},
		byTenant: map[string]map[string]struct{}{}, byCaller: map[string]map[string]struct{}{}, now: time.Now}
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
	caller := Caller(p.Tenant, p.Principal)
	if len(s.byCaller[caller]) >= MaxPerCaller {
		s.sweep(now)
		if len(s.byCaller[caller]) >= MaxPerCaller {
			return Approval{}, ErrCallerFull
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
	index(s.byTenant, p.Tenant, p.ID)
	index(s.byCaller, caller, p.ID)
	return p, nil
}

// index adds id to the set of k in m.
func index(m map[string]map[string]struct{}, k, id string) {
	if m[k] == nil {
		m[k] = map[string]struct{}{}
	}
	m[k][id] = struct{}{}
}

// drop takes id out of the set of k in m.
func drop(m map[string]map[string]struct{}, k, id string) {
	delete(m[k], id)
	if len(m[k]) == 0 {
		delete(m, k)
	}
}

// unindex takes p out of the indexes of undecided approvals.
func (s *Memory) unindex(p *Approval) {
	drop(s.byTenant, p.Tenant, p.ID)
	drop(s.byCaller, Caller(p.Tenant, p.Principal), p.ID)
}

func (s *Memory) sweep(now time.Time) {
	for id, p := range s.byID {
		if !now.Before(p.Expires) {
			delete(s.byID, id)
			s.unindex(p)
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
	s.unindex(p)
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

// Waiting lists the undecided approvals of tenant's callers, oldest first.
func (s *Memory) Waiting(_ context.Context, tenant string, max int) ([]Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var out []Approval
	for id := range s.byTenant[tenant] {
		if p := s.byID[id]; p.Decision == "" && now.Before(p.Expires) {
			out = append(out, *p)
		}
	}
	slices.SortFunc(out, func(a, b Approval) int { return a.Created.Compare(b.Created) })
	if len(out) > max {
		out = out[:max]
	}
	return out, nil
}
