package report

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/keelgen/keel/internal/toolrules"
)

// LogLevel is the severity of a handler's log message to its caller: the
// eight levels of RFC 5424, as MCP names them.
type LogLevel string

// The levels, least severe first.
const (
	LogDebug     LogLevel = "debug"
	LogInfo      LogLevel = "info"
	LogNotice    LogLevel = "notice"
	LogWarning   LogLevel = "warning"
	LogError     LogLevel = "error"
	LogCritical  LogLevel = "critical"
	LogAlert     LogLevel = "alert"
	LogEmergency LogLevel = "emergency"
)

// Valid reports whether l is one of the eight levels.
func (l LogLevel) Valid() bool {
	switch l {
	case LogDebug, LogInfo, LogNotice, LogWarning, LogError, LogCritical, LogAlert, LogEmergency:
		return true
	}
	return false
}

// LogEntry is one log message of a handler, on its way to the caller.
type LogEntry struct {
	Level   LogLevel
	Message string
}

// Bounds of a handler's log messages to its caller.
const (
	// MaxLogMessage is a message in bytes; a longer one is cut at a
	// character boundary.
	MaxLogMessage = 1024
	// LogBurst messages may be sent at once; after that, LogRate a second.
	// A message over the rate is dropped, and the count of those dropped is
	// said in one warning when the call ends.
	LogBurst = 20
	LogRate  = 10
)

type logKey struct{}

// logSink is one call's log messages on their way to the caller.
type logSink struct {
	send    func(LogEntry)
	mu      sync.Mutex // held while sending: messages arrive in order, none after stop
	tokens  float64
	last    time.Time
	dropped int
	stopped bool
}

// WithLog returns a context whose call delivers a handler's Log messages to
// send (an MCP server sends notifications/message with it, at or above the
// level its client set), bounded and rate-limited; and stop, after which
// nothing more is sent: call it when the call has its result and before you
// answer, since a handler's goroutine may outlive it. Give each call its own.
func WithLog(ctx context.Context, send func(LogEntry)) (context.Context, func()) {
	if send == nil {
		return ctx, func() {}
	}
	s := &logSink{send: send, tokens: LogBurst}
	return context.WithValue(ctx, logKey{}, s), s.stop
}

// Log sends a message to the caller at a level, when the caller listens
// (WithLog); otherwise it does nothing and costs a context lookup. The
// message is the handler's own text, as its result is: keep internal detail
// (paths, errors of dependencies) out of it; invalid UTF-8 is replaced and a
// message longer than MaxLogMessage is cut. A level that is not one of the
// eight is dropped, and so is a message over the rate (LogBurst, LogRate);
// the caller hears how many were dropped when the call ends. This is not the
// server's log: the protected log (WithLogger) is.
func Log(ctx context.Context, level LogLevel, message string) {
	s, _ := ctx.Value(logKey{}).(*logSink)
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	now := time.Now()
	if !s.last.IsZero() {
		s.tokens = min(LogBurst, s.tokens+now.Sub(s.last).Seconds()*LogRate)
	}
	s.last = now
	if !level.Valid() || s.tokens < 1 {
		s.dropped++
		return
	}
	s.tokens--
	s.send(LogEntry{Level: level, Message: toolrules.BoundText(message, MaxLogMessage)})
}

func (s *logSink) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.stopped = true
	if s.dropped > 0 {
		s.send(LogEntry{Level: LogWarning, Message: fmt.Sprintf("%d log messages of this call were dropped (an unknown level, or over %d a second)", s.dropped, LogRate)})
	}
}
