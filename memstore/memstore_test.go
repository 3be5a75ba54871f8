package memstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/keelgen/keel/runtime"
)

// A bucket refills at its rate; buckets that are full again are swept, so
// the limiter's size follows the callers over their limits, and once it
// holds its bound of those it refuses a new caller rather than forget one.
func TestRateLimiterRefillsAndIsBounded(t *testing.T) {
	ctx := context.Background()
	m := NewRateLimiterSize(2)
	fast := runtime.RateLimit{Calls: 1, Per: 50 * time.Millisecond}
	if ok, _, _ := m.Take(ctx, "a", fast); !ok {
		t.Fatal("a's first call")
	}
	if ok, wait, _ := m.Take(ctx, "a", fast); ok || wait <= 0 || wait > 50*time.Millisecond {
		t.Fatalf("a's second call: %v, wait %v", ok, wait)
	}
	time.Sleep(60 * time.Millisecond)
	if ok, _, _ := m.Take(ctx, "a", fast); !ok {
		t.Fatal("a's bucket did not refill")
	}
	slow := runtime.RateLimit{Calls: 1, Per: time.Hour}
	m.Take(ctx, "b", slow)
	if _, _, err := m.Take(ctx, "c", slow); !errors.Is(err, ErrRateLimiterFull) {
		t.Fatalf("a third caller in a limiter of 2 in use: %v", err)
	}
	time.Sleep(60 * time.Millisecond) // a is full again: swept for c
	if ok, _, err := m.Take(ctx, "c", slow); !ok || err != nil {
		t.Fatalf("c, once a's bucket refilled: %v %v", ok, err)
	}
	if m.Len() != 2 {
		t.Errorf("%d buckets, want 2", m.Len())
	}
}

// The replay store refuses, never forgets: when it holds its bound of
// unexpired grants, a new grant is refused; an expired one frees a place.
func TestReplayStoreIsBounded(t *testing.T) {
	ctx := context.Background()
	s := NewReplayStoreSize(2)
	soon, later := time.Now().Add(50*time.Millisecond), time.Now().Add(time.Hour)
	for _, n := range []string{"a", "b"} {
		if ok, err := s.Redeem(ctx, n, map[string]time.Time{"a": soon, "b": later}[n]); !ok || err != nil {
			t.Fatalf("redeem %s: %v %v", n, ok, err)
		}
	}
	if ok, err := s.Redeem(ctx, "c", later); ok || err != ErrReplayStoreFull {
		t.Fatalf("a full store accepted a grant: %v %v", ok, err)
	}
	if ok, _ := s.Redeem(ctx, "b", later); ok {
		t.Fatal("a used grant was accepted again")
	}
	time.Sleep(60 * time.Millisecond) // "a" expires
	if ok, err := s.Redeem(ctx, "c", later); !ok || err != nil {
		t.Fatalf("after an expiry: %v %v", ok, err)
	}
	if s.Len() != 2 {
		t.Fatalf("store holds %d grants, want 2", s.Len())
	}
}

// BenchmarkReplayStoreRedeem: the cost of one redeem with n live
// grants in the store; flat in n (a heap, not a sweep of every entry).
func BenchmarkReplayStoreRedeem(b *testing.B) {
	for _, live := range []int{1 << 10, 1 << 16} {
		b.Run(fmt.Sprintf("live=%d", live), func(b *testing.B) {
			s := NewReplayStoreSize(live + b.N + 1)
			ctx := context.Background()
			far := time.Now().Add(time.Hour)
			for i := range live {
				s.Redeem(ctx, "live-"+strconv.Itoa(i), far.Add(time.Duration(i)))
			}
			nonces := make([]string, b.N)
			for i := range nonces {
				nonces[i] = "new-" + strconv.Itoa(i)
			}
			b.ResetTimer()
			for i := range b.N {
				if ok, err := s.Redeem(ctx, nonces[i], far); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

// An OutcomeStore keeps a claim or a result until its time, replaces a
// running claim of the same digest only for a takeover, ends only the
// claim of the token that holds it, and refuses a new key past its bound
// rather than forget one.
func TestOutcomeStoreClaimsAndRecords(t *testing.T) {
	ctx := context.Background()
	s := NewOutcomeStoreSize(2)
	later := time.Now().Add(time.Minute)
	claim := func(key, token, digest string, until time.Time, takeover bool) *runtime.Outcome {
		t.Helper()
		held, err := s.Claim(ctx, key, runtime.Outcome{Token: token, Digest: digest, Until: until}, takeover)
		if err != nil {
			t.Fatal(err)
		}
		return held
	}
	if held := claim("k", "t1", "d", later, false); held != nil {
		t.Fatalf("a new key is held: %+v", held)
	}
	if held := claim("k", "t2", "d", later, false); held == nil || held.Token != "t1" || held.Result != nil {
		t.Fatalf("a running claim: %+v", held)
	}
	if held := claim("k", "t2", "other", later, true); held == nil || held.Token != "t1" {
		t.Fatalf("a takeover with another digest: %+v", held)
	}
	if held := claim("k", "t2", "d", later, true); held != nil {
		t.Fatalf("a takeover with the same digest: %+v", held)
	}
	if err := s.Finish(ctx, "k", "t1", []byte(`{"late":true}`), later); err != nil { // the claim is t2's now
		t.Fatal(err)
	}
	if err := s.Finish(ctx, "k", "t2", []byte(`{"ok":true}`), later); err != nil {
		t.Fatal(err)
	}
	if held := claim("k", "t3", "d", later, true); held == nil || string(held.Result) != `{"ok":true}` {
		t.Fatalf("a recorded result: %+v", held)
	}
	if held := claim("gone", "t4", "d", time.Now().Add(-time.Second), false); held != nil {
		t.Fatalf("%+v", held)
	}
	if held := claim("gone", "t5", "d", later, false); held != nil {
		t.Fatalf("a claim past its time is still held: %+v", held)
	}
	if _, err := s.Claim(ctx, "third", runtime.Outcome{Token: "t6", Until: later}, false); !errors.Is(err, ErrOutcomeStoreFull) {
		t.Fatalf("a key past the bound: %v", err)
	}
	if err := s.Finish(ctx, "gone", "t5", nil, time.Time{}); err != nil || s.Len() != 1 {
		t.Fatalf("a cleared key: %v, %d keys", err, s.Len())
	}
}
