// Package memstore holds the in-memory stores of one process that a
// deployment plugs into the executor: a rate limiter (runtime.RateLimiter),
// a store of redeemed approval grants (runtime.ReplayStore) and one of
// write calls' outcomes (runtime.OutcomeStore). Their shared counterparts
// for replicas are redisrate and redisreplay.
package memstore

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/keelgen/keel/runtime"
)

// DefaultRateKeys is how many buckets a RateLimiter made by
// NewRateLimiter holds.
const DefaultRateKeys = 1 << 20

// ErrRateLimiterFull is a RateLimiter's answer when it holds its
// bound of buckets that are not yet full again: it refuses a new caller
// rather than forget one that is over its limit.
var ErrRateLimiterFull = errors.New("rate limiter is full of buckets in use")

// RateLimiter is the RateLimiter of one process: a token bucket
// (golang.org/x/time/rate) per key and limit, so executors that share one
// limiter under different limits keep apart buckets. A bucket that has
// refilled is the same as a new one, so it is dropped when the limiter
// sweeps, which it does each time it has doubled; its bound counts the
// buckets still in use.
type RateLimiter struct {
	mu      sync.Mutex
	max     int
	buckets map[bucketKey]*bucket
	sweepAt int
}

type bucketKey struct {
	key   string
	limit runtime.RateLimit
}

type bucket struct {
	lim  *rate.Limiter
	full time.Time // when it will hold its whole burst again
}

// NewRateLimiter returns a limiter bounded by DefaultRateKeys.
func NewRateLimiter() *RateLimiter { return NewRateLimiterSize(DefaultRateKeys) }

// NewRateLimiterSize returns a limiter of at most size buckets (at
// least 1).
func NewRateLimiterSize(size int) *RateLimiter {
	return &RateLimiter{max: max(size, 1), buckets: map[bucketKey]*bucket{}, sweepAt: 1024}
}

// Take takes a call from key's bucket.
func (m *RateLimiter) Take(_ context.Context, key string, limit runtime.RateLimit) (bool, time.Duration, error) {
	if limit.Calls <= 0 || limit.Per <= 0 || limit.Burst < 0 {
		return false, 0, fmt.Errorf("the rate limit %d per %v (burst %d) needs a positive count and period", limit.Calls, limit.Per, limit.Burst)
	}
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	k := bucketKey{key, limit}
	b, ok := m.buckets[k]
	if !ok {
		if len(m.buckets) >= min(m.sweepAt, m.max) {
			m.sweep(now)
		}
		if len(m.buckets) >= m.max {
			return false, 0, ErrRateLimiterFull
		}
		every := limit.Per / time.Duration(limit.Calls)
		b = &bucket{lim: rate.NewLimiter(rate.Every(every), burst(limit))}
		m.buckets[k] = b
	}
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d, nil
	}
	b.full = now.Add(time.Duration(float64(burst(limit)-int(b.lim.TokensAt(now))) * float64(limit.Per) / float64(limit.Calls)))
	return true, 0, nil
}

// sweep drops the buckets that are full again, and sets the next sweep at
// twice what remains: amortized O(1) a call.
func (m *RateLimiter) sweep(now time.Time) {
	for k, b := range m.buckets {
		if !now.Before(b.full) {
			delete(m.buckets, k)
		}
	}
	m.sweepAt = max(2*len(m.buckets), 1024)
}

// Len is how many buckets the limiter holds.
func (m *RateLimiter) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.buckets)
}

// burst is limit's bucket size: Burst, else Calls.
func burst(limit runtime.RateLimit) int {
	if limit.Burst == 0 {
		return limit.Calls
	}
	return limit.Burst
}

// DefaultReplayStoreSize is how many unexpired grants a ReplayStore
// made by NewReplayStore remembers.
const DefaultReplayStoreSize = 1 << 20

// ErrReplayStoreFull is a ReplayStore's answer when it holds its
// bound of unexpired grants: it refuses a new grant rather than forget a
// used one.
var ErrReplayStoreFull = errors.New("replay store is full of unexpired grants")

// ReplayStore is the in-memory ReplayStore of one process. It keeps
// each nonce until its grant expires, evicts expired ones in O(log n), and
// refuses new grants once it holds its bound of unexpired ones.
type ReplayStore struct {
	mu       sync.Mutex
	max      int
	seen     map[string]string // nonce → the call that redeemed it ("" by Redeem)
	byExpiry expiryHeap
}

// NewReplayStore returns an empty store bounded by DefaultReplayStoreSize.
func NewReplayStore() *ReplayStore {
	return NewReplayStoreSize(DefaultReplayStoreSize)
}

// NewReplayStoreSize returns an empty store that remembers at most size
// unexpired grants (at least 1).
func NewReplayStoreSize(size int) *ReplayStore {
	return &ReplayStore{max: max(size, 1), seen: map[string]string{}}
}

// Redeem records nonce until expires. Expired entries are evicted first.
func (s *ReplayStore) Redeem(_ context.Context, nonce string, expires time.Time) (bool, error) {
	return s.redeem(nonce, "", false, expires)
}

// RedeemCall records nonce for callID until expires; with retry, a nonce
// already recorded for callID is redeemed again.
func (s *ReplayStore) RedeemCall(_ context.Context, nonce, callID string, retry bool, expires time.Time) (bool, error) {
	return s.redeem(nonce, callMarker(callID), retry, expires)
}

// callMarker is what a store records of the call that redeemed a grant: never
// "", which Redeem records, so no call matches a grant redeemed without one.
func callMarker(callID string) string { return "call:" + callID }

func (s *ReplayStore) redeem(nonce, marker string, retry bool, expires time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for len(s.byExpiry) > 0 && !now.Before(s.byExpiry[0].expires) {
		delete(s.seen, heap.Pop(&s.byExpiry).(expiring).nonce)
	}
	if by, used := s.seen[nonce]; used {
		return retry && marker != "" && by == marker, nil
	}
	if len(s.seen) >= s.max {
		return false, ErrReplayStoreFull
	}
	s.seen[nonce] = marker
	heap.Push(&s.byExpiry, expiring{nonce: nonce, expires: expires})
	return true, nil
}

// Len is how many unexpired grants the store remembers.
func (s *ReplayStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

type expiring struct {
	nonce   string
	expires time.Time
}

// expiryHeap is a container/heap of nonces, the soonest expiry first.
type expiryHeap []expiring

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiring)) }
func (h *expiryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// DefaultOutcomeStoreSize is how many keys an OutcomeStore made by
// NewOutcomeStore holds.
const DefaultOutcomeStoreSize = 1 << 16

// ErrOutcomeStoreFull is an OutcomeStore's answer when it holds its bound
// of unexpired keys: the write is refused (idempotency_unchecked) rather
// than an earlier outcome forgotten.
var ErrOutcomeStoreFull = errors.New("outcome store is full of unexpired outcomes")

// OutcomeStore is the in-memory runtime.OutcomeStore of one process: what
// each write call did, by idempotency key, until it expires. Each entry
// holds a result's bytes, so the bound counts results of up to the
// executor's MaxOutputBytes each.
type OutcomeStore struct {
	mu       sync.Mutex
	max      int
	held     map[string]runtime.Outcome
	byExpiry expiryHeap
}

// NewOutcomeStore returns an empty store bounded by DefaultOutcomeStoreSize.
func NewOutcomeStore() *OutcomeStore { return NewOutcomeStoreSize(DefaultOutcomeStoreSize) }

// NewOutcomeStoreSize returns an empty store of at most size unexpired
// keys (at least 1).
func NewOutcomeStoreSize(size int) *OutcomeStore {
	return &OutcomeStore{max: max(size, 1), held: map[string]runtime.Outcome{}}
}

// Claim stores claim under key unless the key holds an unexpired claim or
// result (runtime.OutcomeStore).
func (s *OutcomeStore) Claim(_ context.Context, key string, claim runtime.Outcome, takeover bool) (*runtime.Outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evict(time.Now())
	if cur, ok := s.held[key]; ok {
		if !takeover || cur.Result != nil || cur.Digest != claim.Digest {
			cur.Result = bytes.Clone(cur.Result)
			return &cur, nil
		}
	} else if len(s.held) >= s.max {
		return nil, ErrOutcomeStoreFull
	}
	claim.Result = nil
	s.put(key, claim)
	return nil, nil
}

// Finish records result under key until until, or clears the key for a nil
// result, when the key holds token's claim.
func (s *OutcomeStore) Finish(_ context.Context, key, token string, result []byte, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.held[key]
	if !ok || cur.Token != token || cur.Result != nil {
		return nil
	}
	if result == nil {
		delete(s.held, key)
		return nil
	}
	cur.Result, cur.Until = bytes.Clone(result), until
	s.put(key, cur)
	return nil
}

// Len is how many unexpired keys the store holds.
func (s *OutcomeStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evict(time.Now())
	return len(s.held)
}

func (s *OutcomeStore) put(key string, o runtime.Outcome) {
	s.held[key] = o
	heap.Push(&s.byExpiry, expiring{nonce: key, expires: o.Until})
}

// evict drops the keys whose time is up; a heap entry of a key since
// stored again with another time is only dropped from the heap.
func (s *OutcomeStore) evict(now time.Time) {
	for len(s.byExpiry) > 0 && !now.Before(s.byExpiry[0].expires) {
		e := heap.Pop(&s.byExpiry).(expiring)
		if cur, ok := s.held[e.nonce]; ok && cur.Until.Equal(e.expires) {
			delete(s.held, e.nonce)
		}
	}
}
