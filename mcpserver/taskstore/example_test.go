package taskstore_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/keelgen/keel/mcpserver/taskstore"
)

// A store keeps a task until it expires; an update changes it atomically,
// and a terminal status is its last.
func ExampleMemory() {
	ctx := context.Background()
	store := taskstore.NewMemory()
	now := time.Now().UTC()
	err := store.CreateTask(ctx, taskstore.Record{ID: "t-1", Owner: "acme/alice", Status: taskstore.Working,
		Created: now, Updated: now, Expires: now.Add(time.Hour)})
	if err != nil {
		fmt.Println(err)
		return
	}
	done, _ := store.UpdateTask(ctx, "t-1", func(r *taskstore.Record) bool {
		r.Status, r.Result = taskstore.Completed, []byte(`{"content":[]}`)
		return true
	})
	fmt.Println(done.Status, done.Status.Terminal())
	_, err = store.Task(ctx, "t-2")
	fmt.Println(errors.Is(err, taskstore.ErrNoTask))
	// Output:
	// completed true
	// true
}
