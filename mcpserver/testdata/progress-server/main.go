// Command progress-server serves one slow tool over MCP on standard input and
// output, for the TypeScript client's long-call check (ts-client/progress.mjs):
// deploy runs for steps × 400 ms and reports progress after each step.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// step is longer than the progress rate limit, so every report passes.
const step = 400 * time.Millisecond

type deployArgs struct {
	Steps int `json:"steps"`
}

type deployResult struct {
	Done int `json:"done"`
}

func main() {
	deploy := runtime.NewTool(runtime.ToolInfo{
		Name: "deploy", Version: "1", Effect: runtime.EffectRead, Description: "Deploys, one step at a time.", Timeout: 30 * time.Second,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":20}},` +
			`"required":["steps"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"done":{"type":"integer"}},"required":["done"],"additionalProperties":false}`),
	}, runtime.Handle(func(ctx context.Context, a deployArgs) (deployResult, error) {
		for i := 1; i <= a.Steps; i++ {
			select {
			case <-ctx.Done():
				return deployResult{}, ctx.Err()
			case <-time.After(step):
			}
			runtime.ReportProgress(ctx, float64(i), float64(a.Steps), fmt.Sprintf("step %d of %d", i, a.Steps))
		}
		return deployResult{Done: a.Steps}, nil
	}))
	set := keeltest.Of(deploy)
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	exec, err := runtime.NewExecutor(set, runtime.WithLogger(logger), runtime.WithObserver(runtime.AuditLog(logger)))
	if err != nil {
		logger.Error("executor", "error", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := mcpserver.ServeStdio(ctx, mcpserver.New(set, exec, mcpserver.Options{Name: "progress"})); err != nil && ctx.Err() == nil {
		logger.Error("serve", "error", err)
		os.Exit(1)
	}
}
