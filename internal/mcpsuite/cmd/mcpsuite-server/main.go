// Command mcpsuite-server serves the mcpsuite tool set over Streamable HTTP
// on a loopback address, for the MCP conformance suite in CI (.ci/run):
// with sessions, or -stateless without. It prints "listening URL" once it
// accepts connections and serves until interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/keelgen/keel/internal/mcpsuite/generated"
	"github.com/keelgen/keel/mcpserver"
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
	exec, err := generated.NewExecutor()
	if err != nil {
		return err
	}
	server := mcpserver.New(exec, mcpserver.Options{Name: "keel-mcpsuite"})
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
