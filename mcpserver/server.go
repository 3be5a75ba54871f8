package mcpserver

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server serves a keel tool set over MCP. keel answers each message that
// runs a tool, from its own reading of the message's bytes; the go-sdk
// server it holds (SDK) keeps the rest: initialize and the session,
// tools/list, ping, logging, and the requests a session sends its client.
type Server struct {
	sdk *mcp.Server
	h   *handler
	log *slog.Logger
}

// SDK is the go-sdk server under s, for what keel leaves to it: add an
// Unmigrated tool there during a move (docs/migrate.md), or a receiving
// middleware. A tools/call keel answers itself does not pass the SDK's
// middleware (SECURITY.md, "The front").
func (s *Server) SDK() *mcp.Server { return s.sdk }

// Run serves s over t until the client hangs up or ctx ends. keel answers
// each tools/call; on an *mcp.StdioTransport or *mcp.IOTransport it frames
// the stream itself (stdio.go), on another transport the SDK's decodes
// each message, which keel reads again (stdiocall.go).
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	ss, err := s.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-ended
		return ctx.Err()
	case err := <-ended:
		return err
	}
}

// Connect serves s over t and returns the session, as mcp.Server.Connect
// does: the place for a transport Run does not fit (an in-memory pair in a
// test).
func (s *Server) Connect(ctx context.Context, t mcp.Transport, opts *mcp.ServerSessionOptions) (*mcp.ServerSession, error) {
	st := &sanitizingTransport{t: t, log: s.log, h: s.h}
	ss, err := s.sdk.Connect(ctx, st, opts)
	if err != nil {
		return nil, err
	}
	st.front.bind(ctx, ss) // from here on, keel answers its calls
	return ss, nil
}

// ServeStdio serves s on standard input and output until the client hangs
// up or ctx ends. Protocol error detail goes to Options.Logger.
func ServeStdio(ctx context.Context, s *Server) error {
	return s.Run(ctx, &mcp.StdioTransport{})
}
