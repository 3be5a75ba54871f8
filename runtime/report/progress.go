package report

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/keelgen/keel/internal/toolrules"
)

// ProgressEntry is one report of a long-running handler: how much is done of
// how much (Total 0: unknown), and a short message for the model or the
// person waiting. The message is the handler's text, as its result is, so
// keep internal detail out of it.
type ProgressEntry struct {
	Done, Total float64
	Message     string
}

// Bounds of what a handler's reports carry to the caller.
const (
	// MaxProgressMessage is a report's message in bytes; a longer one is cut
	// at a character boundary.
	MaxProgressMessage = 200
	// ProgressInterval is the default least time between two reports
	// delivered. Reports in between are coalesced: the latest is delivered
	// when the interval ends, or when the call ends, before its result.
	// The first report that says done is delivered at once (with the
	// report it supersedes, if one waits).
	ProgressInterval = 100 * time.Millisecond
)

type progressKey struct{}

// progressSink is one call's reports on their way to the caller.
type progressSink struct {
	send     func(ProgressEntry)
	interval time.Duration
	mu       sync.Mutex // held while sending: reports arrive in order, none after stop
	last     time.Time
	done     float64
	final    bool           // a report that says done was delivered: the next ones wait their interval
	waiting  *ProgressEntry // the latest report inside the interval, not yet delivered
	timer    *time.Timer    // delivers waiting when the interval ends
	stopped  bool
}

// WithProgress returns a context whose call delivers a handler's
// Progress to send (an MCP server sends notifications/progress with
// it), at most one report per interval (zero or less is ProgressInterval;
// no value turns the limit off); and stop, which delivers a
// report still waiting and after which nothing more is sent: call it when
// the call has its result and before you answer, since a handler's
// goroutine may outlive it. Give each call its own: the rate limit is the
// call's.
func WithProgress(ctx context.Context, send func(ProgressEntry), interval time.Duration) (context.Context, func()) {
	if send == nil {
		return ctx, func() {}
	}
	if interval <= 0 {
		interval = ProgressInterval
	}
	s := &progressSink{send: send, interval: interval}
	return context.WithValue(ctx, progressKey{}, s), s.stop
}

// Progress tells the caller how far the handler has got, when the
// caller asked to hear (WithProgress); otherwise it does nothing and costs
// a context lookup. Reports are rate-limited (coalesced to the latest per
// interval, none lost at the end), a message is cut to
// MaxProgressMessage bytes, and a report whose done is not finite,
// negative or below the last one is dropped.
func Progress(ctx context.Context, done, total float64, message string) {
	s, _ := ctx.Value(progressKey{}).(*progressSink)
	if s == nil || math.IsNaN(done) || math.IsInf(done, 0) || done < 0 || math.IsNaN(total) || math.IsInf(total, 0) || total < 0 {
		return
	}
	p := ProgressEntry{Done: done, Total: total, Message: toolrules.BoundText(message, MaxProgressMessage)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || done < s.done {
		return
	}
	s.done = done
	now := time.Now()
	// Only the first report that says done skips the interval: a handler
	// that says (1, 1) in a loop must not flood the caller.
	final := total > 0 && done >= total && !s.final
	if final || s.last.IsZero() || now.Sub(s.last) >= s.interval {
		s.flushLocked()         // the report it supersedes, so none is lost
		s.deliverLocked(p, now) // marks final when p says done
		return
	}
	s.waiting = &p
	if s.timer == nil {
		s.timer = time.AfterFunc(s.interval-now.Sub(s.last), s.tick)
	}
}

// tick delivers the report waiting at the end of the interval.
func (s *progressSink) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timer = nil
	if !s.stopped {
		s.flushLocked()
	}
}

func (s *progressSink) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.flushLocked() // the last report arrives before the result
	s.stopped = true
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

func (s *progressSink) flushLocked() {
	if s.waiting != nil {
		p := *s.waiting
		s.waiting = nil
		s.deliverLocked(p, time.Now())
	}
}

func (s *progressSink) deliverLocked(p ProgressEntry, now time.Time) {
	s.last = now
	if p.Total > 0 && p.Done >= p.Total {
		s.final = true
	}
	s.send(p)
}
