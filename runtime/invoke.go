package runtime

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"runtime/debug"
	"sync"
	"time"
)

// callContext is the context a handler runs under: the caller's context,
// the call's ExecutionContext, and the handler's deadline. It is one
// allocation where context.WithValue and context.WithTimeout take four and
// a timer each: the executor's own wait at the deadline cancels it, so it
// needs no timer of its own.
type callContext struct {
	parent   context.Context
	ec       ExecutionContext
	deadline time.Time

	mu   sync.Mutex
	done chan struct{} // made on first Done
	err  error
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
	if key == (execContextKey{}) {
		return c.ec
	}
	return c.parent.Value(key)
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
// 1.23; the handler's one send was received).
var (
	timers = sync.Pool{New: func() any {
		t := time.NewTimer(time.Hour)
		t.Stop()
		return t
	}}
	dones = sync.Pool{New: func() any { return make(chan error, 1) }}
)

// invoke runs the handler in its own goroutine, so that one which ignores
// its context still yields a result at the deadline. A panic becomes an
// error carrying its stack. A handler still running after the deadline is
// left to finish; its result is dropped.
func (e *Executor) invoke(ctx context.Context, ec ExecutionContext, tool *Tool, call Call) error {
	timeout := tool.info.Timeout
	if timeout <= 0 {
		timeout = e.timeout
	}
	if err := ctx.Err(); err != nil { // the caller already gave up: run nothing
		return fmt.Errorf("%w: %w before the handler started", errTimeout, err)
	}
	hctx := &callContext{parent: ctx, ec: ec, deadline: time.Now().Add(timeout)}
	defer hctx.cancel(context.Canceled) // as a cancel func would: the handler's own goroutines see the end
	done := dones.Get().(chan error)    // buffered: a late handler never blocks
	go run(hctx, call, done)
	// A handler that does not block usually finishes while the caller yields
	// once; then no timer is armed at all.
	goruntime.Gosched()
	select {
	case err := <-done:
		return finished(hctx, done, err)
	default:
	}
	timer := timers.Get().(*time.Timer)
	timer.Reset(time.Until(hctx.deadline))
	defer func() {
		timer.Stop()
		timers.Put(timer)
	}()
	select {
	case err := <-done:
		return finished(hctx, done, err)
	case <-timer.C:
		hctx.cancel(context.DeadlineExceeded)
		return fmt.Errorf("%w: %w after %v", errTimeout, context.DeadlineExceeded, timeout)
	case <-ctx.Done(): // nil for a context that is never cancelled: never chosen
		hctx.cancel(ctx.Err())
		return fmt.Errorf("%w: %w", errTimeout, context.Cause(ctx))
	}
}

// finished takes the handler's error; done, drained, goes back to the pool.
func finished(hctx *callContext, done chan error, err error) error {
	dones.Put(done)
	if err != nil && hctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return fmt.Errorf("%w: %w", errTimeout, err) // the handler gave up on its context
	}
	return err
}

// run is the handler's goroutine.
func run(ctx *callContext, call Call, done chan<- error) {
	defer func() {
		if p := recover(); p != nil {
			done <- fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	done <- call.Run(ctx)
}
