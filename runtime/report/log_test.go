package report_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/keelgen/keel/runtime/report"
)

// A handler's messages reach the caller in order, valid UTF-8, cut to
// MaxLogMessage; an unknown level and a message over the rate are dropped
// and counted in one warning at stop; nothing is sent after stop; without
// WithLog, Log does nothing.
func TestLogIsBoundedAndRateLimited(t *testing.T) {
	report.Log(context.Background(), report.LogInfo, "nobody listens") // must not panic
	var got []report.LogEntry
	ctx, stop := report.WithLog(context.Background(), func(e report.LogEntry) { got = append(got, e) })
	report.Log(ctx, report.LogInfo, "started")
	report.Log(ctx, "verbose", "an unknown level")
	report.Log(ctx, report.LogError, "bad \xff byte "+strings.Repeat("é", report.MaxLogMessage))
	for range 2 * report.LogBurst {
		report.Log(ctx, report.LogDebug, "flood")
	}
	stop()
	report.Log(ctx, report.LogInfo, "after stop")
	stop()
	if len(got) != report.LogBurst+1 {
		t.Fatalf("%d entries delivered, want the burst of %d and one warning: %+v", len(got), report.LogBurst, got)
	}
	if got[0] != (report.LogEntry{Level: report.LogInfo, Message: "started"}) {
		t.Errorf("first: %+v", got[0])
	}
	if m := got[1].Message; got[1].Level != report.LogError || !utf8.ValidString(m) || len(m) > report.MaxLogMessage || !strings.HasPrefix(m, "bad \uFFFD byte é") {
		t.Errorf("second: level %s, %d bytes, valid %v, %q...", got[1].Level, len(m), utf8.ValidString(m), m[:12])
	}
	dropped := 1 + 2*report.LogBurst - (report.LogBurst - 2) // the unknown level and the flood past the burst
	last := got[len(got)-1]
	if last.Level != report.LogWarning || !strings.HasPrefix(last.Message, strconv.Itoa(dropped)+" log messages of this call were dropped") {
		t.Errorf("last: %+v, want a warning that %d were dropped", last, dropped)
	}
}
