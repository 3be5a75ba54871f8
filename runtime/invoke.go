package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/wire"
)

// callContext is the context a handler runs under: the caller's context,
// the call's ExecutionContext, and the handler's deadline. It is one
// allocation where context.WithValue and context.WithTimeout take four and
// a timer each: the executor's own wait at the deadline cancels it, so it
// needs no timer of its own.
type callContext struct {
	parent   context.Context
	ec       ExecutionContext
	callID   string
	tool     *ToolInfo
	deadline time.Time
	ask      *askState // nil for a call with no answers from a client that can answer none

	mu   sync.Mutex
	done chan struct{} // made on first Done
	err  error

	// The handler's outcome: state goes from running to finished (the
	// caller has not waited yet; result holds the error) or to waiting (the
	// caller waits on wake, which the handler then sends to).
	state  atomic.Int32
	late   bool // the handler finished after its deadline
	result error
	wake   chan error
}

// askState is a call's part in the handler's input requests (package ask):
// the answers it came with, what its client can answer, and what the
// handler asked that has no answer (under the callContext's mu). Apart, so
// that a call that asks nothing keeps callContext within its allocation
// size (256 bytes).
type askState struct {
	answers map[string]json.RawMessage
	accepts ask.Accepter
	asked   map[string]ask.Request
}

const (
	running int32 = iota
	finishedFirst
	callerWaits
)

// finish records the handler's outcome and wakes a waiting caller.
func (c *callContext) finish(err error) {
	c.result, c.late = err, time.Until(c.deadline) < 0 // the monotonic clock alone
	if !c.state.CompareAndSwap(running, finishedFirst) {
		c.wake <- err // buffered: a caller that gave up is not waited for
	}
}

func (c *callContext) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *callContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

func (c *callContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *callContext) Value(key any) any {
	switch key {
	case execContextKey{}:
		return c.ec
	case callContextKey{}:
		return c
	case ask.CallKey{}:
		return ask.Call(c)
	}
	return c.parent.Value(key)
}

// Answer, Accepts and Ask make the handler's call an ask.Call.
func (c *callContext) Answer(key string) (json.RawMessage, bool) {
	if c.ask == nil {
		return nil, false
	}
	a, ok := c.ask.answers[key]
	return a, ok
}

func (c *callContext) Accepts() ask.Kinds {
	if c.ask == nil || c.ask.accepts == nil {
		return 0
	}
	return c.ask.accepts.Accepts()
}

func (c *callContext) Ask(key string, r ask.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ask == nil {
		c.ask = &askState{}
	}
	if c.ask.asked == nil {
		c.ask.asked = map[string]ask.Request{}
	}
	c.ask.asked[key] = r
}

// takeAsked is what the handler asked that has no answer.
func (c *callContext) takeAsked() map[string]ask.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ask == nil {
		return nil
	}
	asked := c.ask.asked
	c.ask.asked = nil
	return asked
}

// cancel ends the context with err; the first cancel wins.
func (c *callContext) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
}

// timers and dones are reused across calls: a call that ends before its
// deadline returns both clean (a stopped timer delivers nothing since Go
// 1.23; the handler's one send was received). A wake channel is not reused
// after a timeout: the late handler may still send to it.
var (
	timers = sync.Pool{New: func() any {
		t := time.NewTimer(time.Hour)
		t.Stop()
		return t
	}}
	dones = sync.Pool{New: func() any { return make(chan error, 1) }}
)

// finished reads the handler's error: one that came after the deadline, or
// that gave up on its context, is a timeout.
func finished(hctx *callContext, err error) error {
	if hctx.late { // the caller was slower to look than the deadline: the result is still late
		hctx.cancel(context.DeadlineExceeded)
		return fmt.Errorf("%w: %w: the handler finished after its deadline", errTimeout, context.DeadlineExceeded)
	}
	if err != nil && hctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		if hctx.parent.Err() != nil { // it gave up because the caller did
			return fmt.Errorf("%w: %w", errCancelled, err)
		}
		return fmt.Errorf("%w: %w", errTimeout, err)
	}
	return err
}

// run is the handler's goroutine.
func run(ctx *callContext, call wire.Call) {
	defer func() {
		if p := recover(); p != nil {
			ctx.finish(fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
		}
	}()
	ctx.finish(call.Run(ctx))
}
