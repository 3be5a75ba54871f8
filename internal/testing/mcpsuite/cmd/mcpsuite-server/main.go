// Command mcpsuite-server serves the mcpsuite tool set over Streamable HTTP
// on a loopback address, for the MCP conformance suite in CI (.ci/run):
// with sessions, or -stateless without. It prints "listening URL" once it
// accepts connections and serves until interrupted.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/keelgen/keel/internal/testing/mcpsuite/generated"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

func main() {
	addr := flag.String("http", "127.0.0.1:0", "serve Streamable HTTP on this loopback `address`")
	stateless := flag.Bool("stateless", false, "serve without sessions")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := run(*addr, *stateless, logger); err != nil {
		logger.Error("mcpsuite-server", "error", err)
		os.Exit(1)
	}
}

func run(addr string, stateless bool, logger *slog.Logger) error {
	// Writes need a person's approval, which the client is asked for.
	grantKey, stateSecret := make([]byte, 32), make([]byte, 32)
	rand.Read(grantKey)
	rand.Read(stateSecret)
	exec, err := generated.NewExecutor(
		runtime.WithApprovals(grant.HMACKey(grantKey), memstore.NewReplayStore()),
		runtime.WithRateLimits(runtime.RateLimits{Limiter: memstore.NewRateLimiter(), PerCaller: runtime.RateLimit{Calls: 1000, Per: time.Second}}),
		runtime.WithToolFilter(goneWhenItRuns))
	if err != nil {
		return err
	}
	approvals, err := mcpserver.NewApprovals(grant.HMACKey(grantKey), stateSecret)
	if err != nil {
		return err
	}
	server := mcpserver.New(exec, mcpserver.Options{Name: "keel-mcpsuite", Approvals: approvals, Tasks: &mcpserver.Tasks{Mode: taskMode, AskFirst: askFirst}})
	h, err := mcpserver.HTTPHandler(server, mcpserver.HTTPOptions{Stateless: stateless, Logger: logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	fmt.Printf("listening http://%s/\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// taskMode serves the tasks scenarios' jobs as tasks; failing_job must be
// one (the suite checks -32021 for a client without the extension).
func taskMode(t runtime.ToolInfo) mcpserver.TaskMode {
	switch t.Name {
	case "slow_compute", "protocol_error_job", "confirm_delete", "multi_input":
		return mcpserver.TaskOptional
	case "failing_job", "test_tool_with_task":
		return mcpserver.TaskRequired
	}
	return mcpserver.TaskNever
}

// askFirst: test_tool_with_task asks before its task exists (the
// tasks-mrtr-composition scenario); multi_input asks as a task
// (tasks-mrtr-input).
func askFirst(t runtime.ToolInfo) time.Duration {
	if t.Name == "test_tool_with_task" {
		return time.Second
	}
	return 0
}

// goneWhenItRuns offers protocol_error_job when its task is created and
// hides it when the task runs (a deploy that removed it in between): the
// run is unknown_tool, a JSON-RPC error (-32602), so its task fails, the
// protocol error the suite asks for. Every other tool is always offered.
func goneWhenItRuns(_ context.Context, ec runtime.ExecutionContext, tool runtime.ToolInfo) bool {
	return tool.Name != "protocol_error_job" || !ec.RateTaken
}
