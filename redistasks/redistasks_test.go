package redistasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/mcpserver/taskstore"
	"github.com/keelgen/keel/redistasks"
	"github.com/keelgen/keel/redistest"
)

// The store serves mcpserver as both its task store and its cancel
// signals.
var _ mcpserver.CancelSignals = (*redistasks.Store)(nil)

func store(t *testing.T, addr string) *redistasks.Store {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	s, err := redistasks.New(c, redistasks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func task(id string, ttl time.Duration) taskstore.Record {
	now := time.Now().UTC()
	return taskstore.Record{ID: id, Owner: "o", Status: taskstore.Working, Created: now, Updated: now, Expires: now.Add(ttl)}
}

// A task made through one client is read and changed through another, as
// it was written, and a second create of its id is refused.
func TestATaskIsSharedByReplicas(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, b := store(t, srv.Addr), store(t, srv.Addr)
	ctx := context.Background()
	if err := a.CreateTask(ctx, task("t1", time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTask(ctx, task("t1", time.Minute)); err == nil {
		t.Fatal("a second create of one id succeeded")
	}
	got, err := b.UpdateTask(ctx, "t1", func(r *taskstore.Record) bool {
		r.Status, r.Result = taskstore.Completed, json.RawMessage(`{"content":[]}`)
		return true
	})
	if err != nil || got.Status != taskstore.Completed {
		t.Fatalf("update: %+v, %v", got, err)
	}
	read, err := a.Task(ctx, "t1")
	if err != nil || read.Status != taskstore.Completed || string(read.Result) != `{"content":[]}` || read.Owner != "o" {
		t.Fatalf("read on the other replica: %+v, %v", read, err)
	}
	unchanged, err := a.UpdateTask(ctx, "t1", func(r *taskstore.Record) bool { r.Status = taskstore.Failed; return false })
	if err != nil || unchanged.Status != taskstore.Completed {
		t.Fatalf("a change that declined wrote: %+v, %v", unchanged, err)
	}
	if _, err := a.Task(ctx, "nope"); !errors.Is(err, taskstore.ErrNoTask) {
		t.Fatalf("an unknown task: %v", err)
	}
	if _, err := a.UpdateTask(ctx, "nope", func(*taskstore.Record) bool { return true }); !errors.Is(err, taskstore.ErrNoTask) {
		t.Fatalf("an update of an unknown task: %v", err)
	}
}

// Redis forgets a task at its expiry, also after updates.
func TestATaskExpires(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	s := store(t, srv.Addr)
	ctx := context.Background()
	if err := s.CreateTask(ctx, task("short", 300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateTask(ctx, "short", func(r *taskstore.Record) bool { r.Message = "still"; return true }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := s.Task(ctx, "short")
		if errors.Is(err, taskstore.ErrNoTask) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task outlived its expiry: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Updates from two replicas at once are each applied once: none is lost to
// the other's read-modify-write.
func TestConcurrentUpdatesAreNotLost(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, b := store(t, srv.Addr), store(t, srv.Addr)
	ctx := context.Background()
	if err := a.CreateTask(ctx, task("count", time.Minute)); err != nil {
		t.Fatal(err)
	}
	const each = 20
	var wg sync.WaitGroup
	for _, s := range []*redistasks.Store{a, b} {
		wg.Go(func() {
			for range each {
				if _, err := s.UpdateTask(ctx, "count", func(r *taskstore.Record) bool { r.Message += "x"; return true }); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got, err := a.Task(ctx, "count")
	if err != nil || len(got.Message) != 2*each {
		t.Fatalf("%d of %d updates kept: %v", len(got.Message), 2*each, err)
	}
}

// A Redis that is gone is an error, never a task.
func TestARedisThatIsGoneIsAnError(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	s := store(t, srv.Addr)
	srv.Kill()
	if err := s.CreateTask(context.Background(), task("t", time.Minute)); err == nil {
		t.Fatal("created with no Redis")
	}
	if _, err := s.Task(context.Background(), "t"); err == nil || errors.Is(err, taskstore.ErrNoTask) {
		t.Fatalf("read with no Redis: %v", err)
	}
}

// One owner holds at most MaxTasksPerOwner unexpired tasks, on every
// replica together: past it that owner's create is ErrTooManyTasks while
// another owner's is stored, a refused create leaves no task, and an
// expired task gives its place back.
func TestAnOwnersTasksAreBounded(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	bounded := func() *redistasks.Store {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		s, err := redistasks.New(c, redistasks.Options{MaxTasksPerOwner: 2})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := bounded(), bounded()
	ctx := context.Background()
	owned := func(id, owner string, ttl time.Duration) taskstore.Record {
		r := task(id, ttl)
		r.Owner = owner
		return r
	}
	if err := a.CreateTask(ctx, owned("m1", "mallory", 300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTask(ctx, owned("m2", "mallory", time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTask(ctx, owned("m1", "mallory", time.Minute)); err == nil || errors.Is(err, taskstore.ErrTooManyTasks) {
		t.Fatalf("a second create of one id: %v", err)
	}
	if err := a.CreateTask(ctx, owned("m3", "mallory", time.Minute)); !errors.Is(err, taskstore.ErrTooManyTasks) {
		t.Fatalf("a third task of one owner: %v", err)
	}
	if _, err := b.Task(ctx, "m3"); !errors.Is(err, taskstore.ErrNoTask) {
		t.Fatalf("the refused task: %v", err)
	}
	if err := b.CreateTask(ctx, owned("a1", "alice", time.Minute)); err != nil {
		t.Fatalf("another owner's task while mallory is at the bound: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := a.CreateTask(ctx, owned("m4", "mallory", time.Minute))
		if err == nil {
			break
		}
		if !errors.Is(err, taskstore.ErrTooManyTasks) || time.Now().After(deadline) {
			t.Fatalf("after m1 expired: %v", err)
		}
	}
	if _, err := redistasks.New(redis.NewClient(&redis.Options{Addr: srv.Addr}), redistasks.Options{MaxTasksPerOwner: -1}); err == nil {
		t.Fatal("a negative bound was accepted")
	}
}

// A task withdrawn before its client saw it (its Expires moved to now by
// an update) is found no more and gives its owner's place back at once,
// on every replica, where its first expiry was a minute away.
func TestAWithdrawnTaskFreesItsPlace(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	a, err := redistasks.New(c, redistasks.Options{MaxTasksPerOwner: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := store(t, srv.Addr)
	ctx := context.Background()
	if err := a.CreateTask(ctx, task("w1", time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateTask(ctx, task("w2", time.Minute)); !errors.Is(err, taskstore.ErrTooManyTasks) {
		t.Fatalf("a second task of a bound of one: %v", err)
	}
	if _, err := b.UpdateTask(ctx, "w1", func(r *taskstore.Record) bool {
		r.Status, r.Expires = taskstore.Cancelled, time.Now()
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Task(ctx, "w1"); !errors.Is(err, taskstore.ErrNoTask) {
		t.Errorf("the withdrawn task is still found: %v", err)
	}
	if err := a.CreateTask(ctx, task("w2", time.Minute)); err != nil {
		t.Errorf("the owner's place after a withdrawal: %v", err)
	}
}
