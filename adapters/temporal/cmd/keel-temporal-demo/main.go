// Command keel-temporal-demo runs one tool call of keel's example set as a
// Temporal activity, against a Temporal server you started:
//
//	temporal server start-dev                  # in another terminal
//	go run ./cmd/keel-temporal-demo            # in adapters/temporal
//
// It serves the example's executor on a task queue (a worker), starts a
// workflow that calls lookup_incident through keeltemporal.Execute, and
// prints the call's result.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	keeltemporal "github.com/keelgen/keel/adapters/temporal"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

func main() {
	hostPort := flag.String("temporal", client.DefaultHostPort, "the Temporal server's `host:port`")
	queue := flag.String("queue", "keel-demo", "the task queue of the workflow and the activity")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, *hostPort, *queue, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// lookup is the demo's workflow: one tool call, as keel's activity.
func lookup(ctx workflow.Context, call runtime.ToolCall) (runtime.ToolResult, error) {
	return keeltemporal.Execute(ctx, runtime.ExecutionContext{Tenant: "demo", Principal: "you"}, call)
}

func run(ctx context.Context, hostPort, queue string, out io.Writer) error {
	c, err := client.Dial(client.Options{HostPort: hostPort})
	if err != nil {
		return fmt.Errorf("dial Temporal at %s (is `temporal server start-dev` running?): %w", hostPort, err)
	}
	defer c.Close()
	exec, err := generated.NewExecutor()
	if err != nil {
		return err
	}
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflow(lookup)
	if err := keeltemporal.Register(w, exec, keeltemporal.Options{}); err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()
	call := runtime.ToolCall{ID: "demo-1", Name: generated.ToolLookupIncident, Arguments: json.RawMessage(`{"incident_id":"INC-001"}`)}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, lookup, call)
	if err != nil {
		return err
	}
	var r runtime.ToolResult
	if err := run.Get(ctx, &r); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "workflow %s ran %s:\n%s\n", run.GetID(), call.Name, b)
	return err
}
