package mcpserver

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver/taskstore"
)

// A task that read failed with an unknown outcome (its lease ran out
// before its end was stored) takes its end when it comes: the late result
// replaces the failure. A cancelled task, or one whose end is known, keeps
// its end.
func TestALateEndReplacesAnUnknownOutcome(t *testing.T) {
	ctx := context.Background()
	store := taskstore.NewMemory()
	ts := &taskServer{Tasks: Tasks{Store: store, TTL: time.Hour}}
	now := time.Now().UTC()
	for _, rec := range []taskstore.Record{
		{ID: "unknown", Status: taskstore.Failed, Unknown: true, Message: outcomeUnknown, Error: unknownOutcomeError},
		{ID: "cancelled", Status: taskstore.Cancelled},
		{ID: "failed", Status: taskstore.Failed, Error: json.RawMessage(`{"code":-32603,"message":"Internal error."}`)},
	} {
		rec.Owner, rec.Created, rec.Updated, rec.Expires = "o", now, now, now.Add(time.Hour)
		if err := store.CreateTask(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}
	for id, want := range map[string]taskstore.Status{"unknown": taskstore.Completed, "cancelled": taskstore.Cancelled, "failed": taskstore.Failed} {
		if _, err := ts.record(ctx, id, "", "lookup", nil, res, nil); err != nil {
			t.Fatal(err)
		}
		got, err := store.Task(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != want || got.Status == taskstore.Completed && (got.Unknown || got.Error != nil || got.Result == nil) {
			t.Errorf("%s after a late end: %+v", id, got)
		}
	}
}
