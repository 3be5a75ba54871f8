// Command progress-server serves two tools over MCP for the TypeScript
// client's checks: deploy, the long call of ts-client/progress.mjs, runs
// for steps × 400 ms and reports progress after each step; seat, the
// questions of ts-client/ask.mjs, asks the person for a seat (a form of
// one member) and returns it. It serves standard input and output, or with
// -http ADDR Streamable HTTP on ADDR (a loopback address), printing
// "listening URL" once it accepts connections.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/keeltest"
	"github.com/keelgen/keel/runtime/report"
)

// step is longer than the progress rate limit, so every report passes.
const step = 400 * time.Millisecond

type deployArgs struct {
	Steps int `json:"steps"`
}

type deployResult struct {
	Done int `json:"done"`
}

// seatForm is seat's question: a form of one member, and no other.
type seatForm struct {
	Seat string `json:"seat"`
}

func (*seatForm) ElicitSchema() []byte {
	return []byte(`{"type":"object","properties":{"seat":{"type":"string","minLength":2,"maxLength":3}},"required":["seat"]}`)
}

func (f *seatForm) ReadElicit(content []byte) error { return ask.Decode(f.ElicitSchema(), content, f) }

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP on this `address` instead of stdio")
	flag.Parse()
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
			report.Progress(ctx, float64(i), float64(a.Steps), fmt.Sprintf("step %d of %d", i, a.Steps))
		}
		return deployResult{Done: a.Steps}, nil
	}))
	seat := runtime.NewTool(runtime.ToolInfo{
		Name: "seat", Version: "1", Effect: runtime.EffectRead, Description: "Asks the person for a seat.", Timeout: 30 * time.Second,
		InputSchema:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"seat":{"type":"string"}},"required":["seat"],"additionalProperties":false}`),
	}, runtime.Handle(func(ctx context.Context, _ struct{}) (seatForm, error) {
		f, err := ask.Elicit[seatForm](ctx, "seat", "Which seat?")
		if err != nil {
			return seatForm{}, err
		}
		return f, nil
	}))
	set := keeltest.Of(deploy, seat)
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	exec, err := runtime.NewExecutor(set, runtime.WithLogger(logger), runtime.WithObserver(runtime.AuditLog(logger)))
	if err != nil {
		logger.Error("executor", "error", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	server := mcpserver.New(exec, mcpserver.Options{Name: "progress"})
	if *addr == "" {
		if err := mcpserver.ServeStdio(ctx, server); err != nil && ctx.Err() == nil {
			logger.Error("serve", "error", err)
			os.Exit(1)
		}
		return
	}
	if err := serveHTTP(ctx, server, *addr, logger); err != nil {
		logger.Error("serve", "error", err)
		os.Exit(1)
	}
}

// serveHTTP serves s on addr until ctx ends, with sessions (so the client's
// notifications/cancelled reaches the call) and a heartbeat every 100 ms,
// so the client reads comment lines between the 400 ms steps.
func serveHTTP(ctx context.Context, s *mcpserver.Server, addr string, logger *slog.Logger) error {
	h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Heartbeat: 100 * time.Millisecond, Logger: logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	fmt.Printf("listening http://%s/\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
