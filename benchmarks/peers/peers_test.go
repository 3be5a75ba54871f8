package peers_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/example"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
)

// incident and args have the example's JSON shape; every server runs the
// same handler body (lookup) and answers with the same contract: the
// result as structuredContent and as JSON text.
type args struct {
	IncidentID string `json:"incident_id"`
}

type incident struct {
	IncidentID string   `json:"incident_id"`
	Service    string   `json:"service"`
	Severity   string   `json:"severity"`
	Symptom    string   `json:"symptom"`
	Evidence   []string `json:"evidence"`
}

func lookup(ctx context.Context, a args) (incident, error) {
	inc, err := example.LookupIncident(ctx, example.LookupIncidentArgs{IncidentID: example.IncidentID(a.IncidentID)})
	return incident{string(inc.IncidentID), inc.Service, inc.Severity, inc.Symptom, inc.Evidence}, err
}

const tool = generated.ToolLookupIncident

// A peer serves the tool: over a pair of streams (stdio), and as an HTTP
// handler.
type peer struct {
	name  string
	serve func(ctx context.Context, in io.ReadCloser, out io.WriteCloser)
	http  func() http.Handler
}

func keelServer(b testing.TB) *mcpserver.Server {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	return mcpserver.New(exec, mcpserver.Options{})
}

func typedServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk-typed", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: tool, Description: "Look up an incident."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, incident, error) {
			inc, err := lookup(ctx, a)
			return nil, inc, err
		})
	return s
}

func rawServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk-raw", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: tool, Description: "Look up an incident.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a args
			if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
				return nil, err
			}
			inc, err := lookup(ctx, a)
			if err != nil {
				return nil, err
			}
			out, err := json.Marshal(inc)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}, StructuredContent: json.RawMessage(out)}, nil
		})
	return s
}

func mcpgoServer() *mcpgoserver.MCPServer {
	s := mcpgoserver.NewMCPServer("mcp-go", "1", mcpgoserver.WithToolCapabilities(false))
	s.AddTool(mcpgo.NewTool(tool, mcpgo.WithDescription("Look up an incident."), mcpgo.WithString("incident_id", mcpgo.Required())),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			var a args
			if err := req.BindArguments(&a); err != nil {
				return nil, err
			}
			inc, err := lookup(ctx, a)
			if err != nil {
				return nil, err
			}
			return mcpgo.NewToolResultJSON(inc)
		})
	return s
}

func sdkPeer(name string, s func() *mcp.Server) peer {
	return peer{
		name: name,
		serve: func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) {
			s().Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
		},
		http: func() http.Handler {
			srv := s()
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
		},
	}
}

func peers(b testing.TB) []peer {
	keel := peer{
		name: "keel",
		serve: func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) {
			keelServer(b).Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
		},
		http: func() http.Handler {
			h, err := mcpserver.HTTPHandler(keelServer(b), mcpserver.HTTPOptions{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			return h
		},
	}
	return []peer{
		keel,
		{
			name: "mcp-go",
			serve: func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) {
				mcpgoserver.NewStdioServer(mcpgoServer()).Listen(ctx, in, out)
			},
			http: func() http.Handler { return mcpgoserver.NewStreamableHTTPServer(mcpgoServer()) },
		},
		sdkPeer("sdk-typed", typedServer),
		sdkPeer("sdk-raw", rawServer),
		{
			name: "floor",
			serve: func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) {
				serveFloorStdio(ctx, in, out)
			},
			http: floorHTTP,
		},
	}
}

// counter counts the bytes that pass.
type counter struct {
	n *atomic.Int64
	w io.WriteCloser
}

func (c counter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return c.w.Write(p)
}

func (c counter) Close() error { return c.w.Close() }

func callLoop(b *testing.B, cs *mcp.ClientSession, wire *atomic.Int64) {
	params := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"incident_id": "INC-001"}}
	if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError || res.StructuredContent == nil {
		b.Fatalf("%v %+v", err, res)
	}
	b.ReportAllocs()
	start := wire.Load()
	for b.Loop() {
		if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	b.ReportMetric(float64(wire.Load()-start)/float64(b.N), "wire-B/op")
}

// BenchmarkStdio: tools/call round trips over a pair of in-process pipes,
// each server on its own stdio framing, the go-sdk client on the other
// end. With -count, the servers run in turn.
func BenchmarkStdio(b *testing.B) {
	for _, p := range peers(b) {
		b.Run(p.name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var wire atomic.Int64
			cin, sout := io.Pipe()
			sin, cout := io.Pipe()
			go p.serve(ctx, sin, counter{&wire, sout})
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
				&mcp.IOTransport{Reader: cin, Writer: counter{&wire, cout}}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			callLoop(b, cs, &wire)
		})
	}
}

// countingTransport counts the bytes of each response body.
type countingTransport struct{ n *atomic.Int64 }

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.ContentLength > 0 {
		t.n.Add(r.ContentLength)
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = countingBody{resp.Body, t.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// BenchmarkHTTP: tools/call round trips over loopback Streamable HTTP, each
// server with sessions (its default), one client.
func BenchmarkHTTP(b *testing.B) {
	// The go-sdk's client speaks 2026-07-28 (no session) to a server that
	// serves it, keel's and the go-sdk's stateless handler, and falls back
	// to a 2025-11-25 session with the others: sdk-raw-stateless is the
	// floor of the sessionless revision, sdk-raw that of a session.
	stateless := peer{name: "sdk-raw-stateless", http: func() http.Handler {
		srv := rawServer()
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	}}
	for _, p := range append(peers(b), stateless) {
		b.Run(p.name, func(b *testing.B) {
			srv := httptest.NewServer(p.http())
			defer srv.Close()
			var wire atomic.Int64
			client := &http.Client{Transport: countingTransport{&wire}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			callLoop(b, cs, &wire)
		})
	}
}

// BenchmarkInMemory: the go-sdk's in-memory transports, for the servers on
// the go-sdk (mcp-go has none the go-sdk client can use).
func BenchmarkInMemory(b *testing.B) {
	type server interface {
		Connect(context.Context, mcp.Transport, *mcp.ServerSessionOptions) (*mcp.ServerSession, error)
	}
	for _, p := range []struct {
		name string
		s    func() server
	}{
		{"keel", func() server { return keelServer(b) }},
		{"sdk-typed", func() server { return typedServer() }},
		{"sdk-raw", func() server { return rawServer() }},
	} {
		b.Run(p.name, func(b *testing.B) {
			st, ct := mcp.NewInMemoryTransports()
			if _, err := p.s().Connect(context.Background(), st, nil); err != nil {
				b.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			var none atomic.Int64
			callLoop(b, cs, &none)
		})
	}
}

// The comparison is of the same tool: every peer answers the call with the
// same structured result, over stdio and over HTTP.
func TestPeersAnswerAlike(t *testing.T) {
	var want string
	for _, p := range peers(t) {
		ctx, cancel := context.WithCancel(context.Background())
		cin, sout := io.Pipe()
		sin, cout := io.Pipe()
		go p.serve(ctx, sin, sout)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cin, Writer: cout}, nil)
		if err != nil {
			t.Fatal(p.name, err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"incident_id": "INC-001"}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", p.name, err, res)
		}
		got, _ := json.Marshal(res.StructuredContent)
		if want == "" {
			want = string(got)
		} else if string(got) != want {
			t.Errorf("%s answered %s, keel %s", p.name, got, want)
		}
		cs.Close()
		cancel()
	}
	if want == "" || !json.Valid([]byte(want)) {
		t.Fatal("no answer")
	}
}
