package runtime_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/keelgen/keel/runtime"
)

// Reports reach the caller that asked, bounded and rate-limited: one per
// interval, the final one always, none that goes back, none after stop;
// without a caller that asked, ReportProgress does nothing.
func TestReportProgress(t *testing.T) {
	runtime.ReportProgress(context.Background(), 1, 2, "nobody listens") // must not panic or block

	var got []runtime.Progress
	ctx, stop := runtime.WithProgress(context.Background(), func(p runtime.Progress) { got = append(got, p) })
	runtime.ReportProgress(ctx, 1, 10, "first")
	runtime.ReportProgress(ctx, 2, 10, "too soon: dropped")
	time.Sleep(runtime.ProgressInterval + 20*time.Millisecond)
	runtime.ReportProgress(ctx, 0.5, 10, "backwards: dropped")
	runtime.ReportProgress(ctx, math.NaN(), 10, "not a number: dropped")
	runtime.ReportProgress(ctx, 3, 10, strings.Repeat("é", 150)) // 300 bytes
	runtime.ReportProgress(ctx, 10, 10, "done, however soon")
	stop()
	runtime.ReportProgress(ctx, 10, 10, "after stop: dropped")
	if len(got) != 3 || got[0].Message != "first" || got[2].Message != "done, however soon" || got[2].Done != 10 {
		t.Fatalf("reports %+v", got)
	}
	if m := got[1].Message; len(m) > runtime.MaxProgressMessage || len(m) != 200 || !strings.HasPrefix(m, "é") {
		t.Fatalf("a long message came as %d bytes: %q", len(m), m)
	}
}

// Only the first report that says done skips the interval: (1, 1) in a
// loop delivered every one of 1,000 reports before.
func TestProgressDoneDoesNotFlood(t *testing.T) {
	delivered := 0
	ctx, stop := runtime.WithProgress(context.Background(), func(runtime.Progress) { delivered++ })
	defer stop()
	start := time.Now()
	for range 1000 {
		runtime.ReportProgress(ctx, 1, 1, "done")
	}
	// However slow the machine, 1,000 calls in a loop span few intervals.
	if limit := 1 + int(time.Since(start)/runtime.ProgressInterval) + 1; delivered > limit {
		t.Fatalf("%d of 1,000 done reports delivered; at most %d fit the interval", delivered, limit)
	}
	if delivered < 1 {
		t.Fatal("the first done report was not delivered")
	}
}
