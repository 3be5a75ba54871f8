package taskstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/keelgen/keel/mcpserver/taskstore"
)

// What a Store does for the MCP server's tasks: a task is created once,
// changed atomically, and read on any replica that shares the store (this
// one serves one process; redistasks serves several).
func ExampleMemory() {
	store := taskstore.NewMemory()
	ctx := context.Background()
	now := time.Now()
	err := store.CreateTask(ctx, taskstore.Record{ID: "task-1", Owner: "acme/alice", Status: taskstore.Working,
		Created: now, Updated: now, Expires: now.Add(time.Hour)})
	fmt.Println(err)
	done, err := store.UpdateTask(ctx, "task-1", func(r *taskstore.Record) bool {
		r.Status, r.Result = taskstore.Completed, []byte(`{"content":[]}`)
		return true
	})
	fmt.Println(done.Status, string(done.Result), err)
	_, err = store.Task(ctx, "task-2")
	fmt.Println(err == taskstore.ErrNoTask)
	// Output:
	// <nil>
	// completed {"content":[]} <nil>
	// true
}
