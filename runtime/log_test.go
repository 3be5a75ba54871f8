package runtime_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/keelgen/keel/runtime"
)

// A handler's messages reach the caller in order, valid UTF-8, cut to
// MaxLogMessage; an unknown level and a message over the rate are dropped
// and counted in one warning at stop; nothing is sent after stop; without
// WithLog, Log does nothing.
func TestLogIsBoundedAndRateLimited(t *testing.T) {
	runtime.Log(context.Background(), runtime.LogInfo, "nobody listens") // must not panic
	var got []runtime.LogEntry
	ctx, stop := runtime.WithLog(context.Background(), func(e runtime.LogEntry) { got = append(got, e) })
	runtime.Log(ctx, runtime.LogInfo, "started")
	runtime.Log(ctx, "verbose", "an unknown level")
	runtime.Log(ctx, runtime.LogError, "bad \xff byte "+strings.Repeat("é", runtime.MaxLogMessage))
	for range 2 * runtime.LogBurst {
		runtime.Log(ctx, runtime.LogDebug, "flood")
	}
	stop()
	runtime.Log(ctx, runtime.LogInfo, "after stop")
	stop()
	if len(got) != runtime.LogBurst+1 {
		t.Fatalf("%d entries delivered, want the burst of %d and one warning: %+v", len(got), runtime.LogBurst, got)
	}
	if got[0] != (runtime.LogEntry{Level: runtime.LogInfo, Message: "started"}) {
		t.Errorf("first: %+v", got[0])
	}
	if m := got[1].Message; got[1].Level != runtime.LogError || !utf8.ValidString(m) || len(m) > runtime.MaxLogMessage || !strings.HasPrefix(m, "bad \uFFFD byte é") {
		t.Errorf("second: level %s, %d bytes, valid %v, %q...", got[1].Level, len(m), utf8.ValidString(m), m[:12])
	}
	dropped := 1 + 2*runtime.LogBurst - (runtime.LogBurst - 2) // the unknown level and the flood past the burst
	last := got[len(got)-1]
	if last.Level != runtime.LogWarning || !strings.HasPrefix(last.Message, strconv.Itoa(dropped)+" log messages of this call were dropped") {
		t.Errorf("last: %+v, want a warning that %d were dropped", last, dropped)
	}
}
