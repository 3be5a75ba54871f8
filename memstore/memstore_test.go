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
