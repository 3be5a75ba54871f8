package taskclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"time"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/mcpserver/taskclient"
	"github.com/keelgen/keel/mcpserver/taskstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/keeltest"
)

// Region is the form the task's handler asks its client's person to fill.
type Region struct {
	Region string `json:"region"`
}

func (*Region) ElicitSchema() []byte {
	return []byte(`{"type":"object","properties":{"region":{"type":"string","enum":["eu","us"]}},"required":["region"]}`)
}

func (r *Region) ReadElicit(content []byte) error { return ask.Decode(r.ElicitSchema(), content, r) }

// A task from Go: Start calls a task tool, Wait follows the task on
// tasks/get and answers the question it waits on with tasks/update, and
// the task's result comes back once it completed.
func Example() {
	export := runtime.NewTool(runtime.ToolInfo{Name: "export_logs", Version: "1", Effect: runtime.EffectRead, Description: "Exports a region's logs.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (map[string]string, error) {
			r, err := ask.Elicit[Region](ctx, "region", "Which region's logs?")
			if err != nil {
				return nil, err
			}
			return map[string]string{"exported": r.Region}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(export), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	server := mcpserver.New(exec, mcpserver.Options{Tasks: &mcpserver.Tasks{Store: taskstore.NewMemory(), PollInterval: 20 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)}})
	h, err := mcpserver.HTTPHandler(server, mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := &taskclient.Client{Endpoint: srv.URL, Capabilities: map[string]any{"elicitation": map[string]any{}}}
	task, _, err := c.Start(ctx, "export_logs", map[string]any{})
	if err != nil {
		panic(err)
	}
	done, err := c.Wait(ctx, task.ID, func(_ context.Context, t *taskclient.Task) (map[string]any, error) {
		fmt.Println(t.Status, "asks", len(t.InputRequests))
		return map[string]any{"region": map[string]any{"action": "accept", "content": map[string]any{"region": "eu"}}}, nil
	})
	if err != nil {
		panic(err)
	}
	var result struct {
		StructuredContent map[string]string `json:"structuredContent"`
	}
	json.Unmarshal(done.Result, &result)
	fmt.Println(done.Status, result.StructuredContent["exported"])
	// Output:
	// input_required asks 1
	// completed eu
}
