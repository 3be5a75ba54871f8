package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// A memory task store holds at most its bound of unexpired tasks: past it a
// new task is refused, and once tasks expire there is room again.
func TestMemoryTaskStoreIsBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	s := NewMemoryTaskStore()
	s.now = func() time.Time { return now }
	s.max = 3
	add := func(i int) error {
		return s.CreateTask(context.Background(), TaskRecord{ID: fmt.Sprint("t", i), Status: TaskWorking, Expires: now.Add(time.Minute)})
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
