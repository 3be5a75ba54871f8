// Command incident-mcp serves the example's incident tools over the Model
// Context Protocol: on standard input and output by default, or over
// Streamable HTTP with -http.
//
//	go run ./example/cmd/incident-mcp                       # stdio
//	go run ./example/cmd/incident-mcp -http 127.0.0.1:8080  # Streamable HTTP at /
//
// Write tools (create_ticket) run only with -allow-side-effects: the
// server's owner decides that, never the client.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("incident-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("http", "", "serve Streamable HTTP on `address` (host:port) instead of stdio")
	allow := fs.Bool("allow-side-effects", false, "let write tools run (the execution context of every call)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// The protected log goes to stderr: stdout carries the protocol on stdio.
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	exec, err := generated.NewExecutor(runtime.WithLogger(logger))
	if err != nil {
		fmt.Fprintln(stderr, "incident-mcp:", err)
		return 1
	}
	logger.Info("serving tools", "set_digest", exec.SetDigest(), "allow_side_effects", *allow)
	server := mcpserver.New(generated.ToolSet, exec, mcpserver.Options{
		Name: "incident-tools",
		Context: func(context.Context, *mcp.CallToolRequest) runtime.ExecutionContext {
			return runtime.ExecutionContext{AllowSideEffects: *allow, Principal: "mcp-client"}
		},
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *addr != "" {
		srv := &http.Server{Addr: *addr, Handler: mcpserver.HTTPHandler(server)}
		go func() { <-ctx.Done(); srv.Close() }()
		fmt.Fprintf(stderr, "incident-mcp: Streamable HTTP on http://%s/\n", *addr)
		if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
			fmt.Fprintln(stderr, "incident-mcp:", err)
			return 1
		}
		return 0
	}
	if err := mcpserver.ServeStdio(ctx, server); err != nil && ctx.Err() == nil {
		fmt.Fprintln(stderr, "incident-mcp:", err)
		return 1
	}
	return 0
}
