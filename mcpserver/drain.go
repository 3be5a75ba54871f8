package mcpserver

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/keelgen/keel/mcpserver/taskstore"
)

// drain is a server's shutdown: once it drains, no call or task starts,
// and the calls and task runs already going are counted down to none.
type drain struct {
	mu       sync.Mutex
	draining bool
	running  int
	idle     chan struct{} // closed once draining with nothing running
}

// enter counts a call in; false once the server drains, when the call
// must be refused.
func (d *drain) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		return false
	}
	d.running++
	return true
}

// track counts in a task's run, which a request let in before the drain
// started: it runs, and the drain waits for it.
func (d *drain) track() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.running++
}

// closed reports whether the server drains.
func (d *drain) closed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.draining
}

func (d *drain) leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.running--
	if d.draining && d.running == 0 && d.idle != nil {
		close(d.idle)
		d.idle = nil
	}
}

// start begins the drain and returns what is closed once nothing runs.
func (d *drain) start() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.draining = true
	done := make(chan struct{})
	if d.running == 0 {
		close(done)
		return done
	}
	if d.idle == nil {
		d.idle = make(chan struct{})
	}
	return d.idle
}

// Shutdown drains s, for a restart or a scale-down: from its call on, a
// new tools/call, a new task and a task's answer (tasks/update) are
// refused before anything of them runs, -32029 with a wait of a second
// (over HTTP, 429 with Retry-After: 1), so that a client sends them
// again, to another replica behind a load balancer; each is audited as a
// refused message (draining). Calls and task runs already going go on to
// their end, their results answered and stored as always. Shutdown
// returns nil once none runs. When ctx ends first, it cancels the task
// runs still going and releases their leases at once, so that any
// replica answers for them without waiting out Tasks.Lease (failed, the
// outcome unknown: the call may have run), and returns ctx's error.
// Calls over HTTP end with their requests (stop the http.Server after
// Shutdown returns, with its own Shutdown); over stdio, with Run's ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	select {
	case <-s.h.drain.start():
		return nil
	case <-ctx.Done():
	}
	if t := s.h.tasks; t != nil {
		t.abandonRunning(s.log)
	}
	return ctx.Err()
}

// abandonRunning ends this replica's task runs at a shutdown's deadline:
// each is cancelled, its end is not recorded (a cancel's outcome is not
// the call's), and its lease is released so that any replica reads it as
// failed with an unknown outcome.
func (t *taskServer) abandonRunning(log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t.running.Range(func(key, value any) bool {
		id := key.(string)
		t.abandoned.Store(id, true)
		(*value.(*context.CancelFunc))()
		_, err := t.Store.UpdateTask(ctx, id, func(r *taskstore.Record) bool {
			if r.Status != taskstore.Working || r.Lease.IsZero() {
				return false
			}
			r.Lease = time.Now().UTC().Add(-time.Millisecond)
			return true
		})
		if err != nil {
			log.LogAttrs(ctx, slog.LevelWarn, "keel: a drained task's lease could not be released; it reads failed once the lease is over", slog.String("task", id), slog.Any("error", err))
		}
		return true
	})
}
