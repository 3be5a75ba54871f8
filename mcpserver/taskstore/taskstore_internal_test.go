package taskstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// A memory task store holds at most its bound of unexpired tasks: past it a
// new task is refused, and once tasks expire there is room again.
func TestMemoryIsBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	s := NewMemory()
	s.now = func() time.Time { return now }
	s.max = 3
	add := func(i int) error {
		return s.CreateTask(context.Background(), Record{ID: fmt.Sprint("t", i), Status: Working, Expires: now.Add(time.Minute)})
	}
	for i := range 3 {
		if err := add(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := add(3); !errors.Is(err, errTasksFull) {
		t.Fatalf("a fourth task: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if err := add(4); err != nil {
		t.Fatalf("after the three expired: %v", err)
	}
	if _, err := s.Task(context.Background(), "t0"); !errors.Is(err, ErrNoTask) {
		t.Fatalf("an expired task: %v", err)
	}
}

// One owner holds at most its bound of unexpired tasks: past it that
// owner's new task is ErrTooManyTasks while another owner's is stored, and
// once the owner's tasks expire it has room again.
func TestMemoryBoundsEachOwner(t *testing.T) {
	now := time.Unix(1000, 0)
	s := NewMemory()
	s.now = func() time.Time { return now }
	s.maxOwner = 2
	add := func(owner string, i int) error {
		return s.CreateTask(context.Background(), Record{ID: fmt.Sprint(owner, i), Owner: owner, Status: Working, Expires: now.Add(time.Minute)})
	}
	for i := range 2 {
		if err := add("mallory", i); err != nil {
			t.Fatal(err)
		}
	}
	if err := add("mallory", 2); !errors.Is(err, ErrTooManyTasks) {
		t.Fatalf("a third task of one owner: %v", err)
	}
	if err := add("alice", 0); err != nil {
		t.Fatalf("another owner's task while mallory is at the bound: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if err := add("mallory", 3); err != nil {
		t.Fatalf("after mallory's tasks expired: %v", err)
	}
	if _, err := s.Task(context.Background(), "mallory0"); !errors.Is(err, ErrNoTask) {
		t.Fatalf("an expired task: %v", err)
	}
}
