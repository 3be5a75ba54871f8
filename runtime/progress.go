package runtime

import (
	"context"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Progress is one report of a long-running handler: how much is done of
// how much (Total 0: unknown), and a short message for the model or the
// person waiting. The message is the handler's text, as its result is, so
// keep internal detail out of it.
type Progress struct {
	Done, Total float64
	Message     string
}

// Bounds of what a handler's reports carry to the caller.
const (
	// MaxProgressMessage is a report's message in bytes; a longer one is cut
	// at a character boundary.
	MaxProgressMessage = 200
	// ProgressInterval is the least time between two reports delivered; a
	// report in between is dropped, except the first that says done.
	ProgressInterval = 100 * time.Millisecond
)

type progressKey struct{}

// progressSink is one call's reports on their way to the caller.
type progressSink struct {
	send    func(Progress)
	mu      sync.Mutex // held while sending: reports arrive in order, none after stop
	last    time.Time
	done    float64
	final   bool // a report that says done was delivered: the next ones wait their interval
	stopped bool
}

// WithProgress returns a context whose call delivers a handler's
// ReportProgress to send (an MCP server sends notifications/progress with
// it), and stop, after which nothing more is sent: call it when the call
// has its result, since a handler's goroutine may outlive it. Give each call
// its own: the rate limit is the call's.
func WithProgress(ctx context.Context, send func(Progress)) (context.Context, func()) {
	if send == nil {
		return ctx, func() {}
	}
	s := &progressSink{send: send}
	return context.WithValue(ctx, progressKey{}, s), func() {
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
	}
}

// ReportProgress tells the caller how far the handler has got, when the
// caller asked to hear (WithProgress); otherwise it does nothing and costs
// a context lookup. Reports are rate-limited (ProgressInterval), a
// message is cut to MaxProgressMessage bytes, and a report whose done is
// not finite, negative or below the last one is dropped.
func ReportProgress(ctx context.Context, done, total float64, message string) {
	s, _ := ctx.Value(progressKey{}).(*progressSink)
	if s == nil || math.IsNaN(done) || math.IsInf(done, 0) || done < 0 || math.IsNaN(total) || math.IsInf(total, 0) || total < 0 {
		return
	}
	final := total > 0 && done >= total
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	// Only the first report that says done skips the interval: a handler
	// that says (1, 1) in a loop must not flood the caller.
	skip := final && !s.final
	if s.stopped || done < s.done || (!skip && !s.last.IsZero() && now.Sub(s.last) < ProgressInterval) {
		return
	}
	s.last, s.done, s.final = now, done, s.final || final
	s.send(Progress{Done: done, Total: total, Message: boundMessage(message)})
}

func boundMessage(m string) string {
	m = strings.ToValidUTF8(m, "\uFFFD")
	if len(m) <= MaxProgressMessage {
		return m
	}
	cut := MaxProgressMessage
	for cut > 0 && !utf8.RuneStart(m[cut]) {
		cut--
	}
	return m[:cut]
}
