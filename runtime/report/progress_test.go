package report_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keelgen/keel/runtime/report"
)

// Reports reach the caller that asked, bounded and rate-limited: one per
// interval, a report inside it coalesced (the latest delivered when the
// interval ends), the first that says done at once, none that goes back,
// none after stop; without a caller that asked, Progress does
// nothing.
func TestProgress(t *testing.T) {
	report.Progress(context.Background(), 1, 2, "nobody listens") // must not panic or block

	var got []report.ProgressEntry
	ctx, stop := report.WithProgress(context.Background(), func(p report.ProgressEntry) { got = append(got, p) }, 0)
	report.Progress(ctx, 1, 10, "first")
	report.Progress(ctx, 2, 10, "too soon: superseded")
	report.Progress(ctx, 2.5, 10, "too soon: delivered when the interval ends")
	time.Sleep(2*report.ProgressInterval + 20*time.Millisecond)
	report.Progress(ctx, 0.5, 10, "backwards: dropped")
	report.Progress(ctx, math.NaN(), 10, "not a number: dropped")
	report.Progress(ctx, 3, 10, strings.Repeat("é", 150)) // 300 bytes
	report.Progress(ctx, 10, 10, "done, however soon")
	stop()
	report.Progress(ctx, 10, 10, "after stop: dropped")
	var messages []string
	for _, p := range got {
		messages = append(messages, p.Message)
	}
	if len(got) != 4 || got[0].Message != "first" || got[1].Message != "too soon: delivered when the interval ends" || got[1].Done != 2.5 ||
		got[3].Message != "done, however soon" || got[3].Done != 10 {
		t.Fatalf("reports %q", messages)
	}
	if m := got[2].Message; len(m) > report.MaxProgressMessage || len(m) != 200 || !strings.HasPrefix(m, "é") {
		t.Fatalf("a long message came as %d bytes: %q", len(m), m)
	}
}

// The conformance suite's case: reports 50 ms apart, under a 100 ms
// interval, all reach the caller (the one inside the interval when the
// interval ends), and a report still waiting when the call ends is
// delivered by stop, before the result.
func TestProgressIsCoalescedNotDropped(t *testing.T) {
	t.Parallel() // waits on timers
	var mu sync.Mutex
	var got []float64
	ctx, stop := report.WithProgress(context.Background(), func(p report.ProgressEntry) {
		mu.Lock()
		got = append(got, p.Done)
		mu.Unlock()
	}, 0)
	for i := range 3 {
		report.Progress(ctx, float64(i), 10, "step")
		time.Sleep(report.ProgressInterval / 2)
	}
	report.Progress(ctx, 5, 10, "the last before the result")
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 3 || got[len(got)-1] != 5 || !slices.IsSorted(got) {
		t.Fatalf("delivered %v: want at least three, in order, ending with the last report", got)
	}
	// The interval is an option; zero is the default, never no limit.
	delivered := 0
	ctx, stop = report.WithProgress(context.Background(), func(report.ProgressEntry) { delivered++ }, 0)
	for i := range 100 {
		report.Progress(ctx, float64(i), 1000, "")
	}
	stop()
	if delivered > 3 {
		t.Fatalf("a zero interval delivered %d of 100 reports sent at once", delivered)
	}
}

// Only the first report that says done skips the interval: (1, 1) in a
// loop delivered every one of 1,000 reports before.
func TestProgressDoneDoesNotFlood(t *testing.T) {
	delivered := 0
	ctx, stop := report.WithProgress(context.Background(), func(report.ProgressEntry) { delivered++ }, 0)
	defer stop()
	start := time.Now()
	for range 1000 {
		report.Progress(ctx, 1, 1, "done")
	}
	// However slow the machine, 1,000 calls in a loop span few intervals.
	if limit := 1 + int(time.Since(start)/report.ProgressInterval) + 1; delivered > limit {
		t.Fatalf("%d of 1,000 done reports delivered; at most %d fit the interval", delivered, limit)
	}
	if delivered < 1 {
		t.Fatal("the first done report was not delivered")
	}
}
