package mcpserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/example"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
)

// connector is a keel server or a go-sdk one.
type connector interface {
	Connect(context.Context, mcp.Transport, *mcp.ServerSessionOptions) (*mcp.ServerSession, error)
}

func connect(b *testing.B, s connector) *mcp.ClientSession {
	b.Helper()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.Connect(context.Background(), st, nil); err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func benchCall(b *testing.B, cs *mcp.ClientSession) {
	params := &mcp.CallToolParams{Name: generated.ToolLookupIncident, Arguments: map[string]any{"incident_id": "INC-001"}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkCallKeel: tools/call round trips through keel's MCP server (its
// executor: strict parse, keel's schema, policy, deadline, output schema).
// Compare with BenchmarkCallSDKTyped in the same run.
func BenchmarkCallKeel(b *testing.B) {
	benchCall(b, connect(b, mcpserver.New(quietExecutor(b, generated.ToolSet()), mcpserver.Options{})))
}

// sdkArgs and sdkIncident have the example's JSON shape without its
// invopop tags, which the SDK's schema inference reads differently.
type sdkArgs struct {
	IncidentID string `json:"incident_id"`
}

type sdkIncident struct {
	IncidentID string   `json:"incident_id"`
	Service    string   `json:"service"`
	Severity   string   `json:"severity"`
	Symptom    string   `json:"symptom"`
	Evidence   []string `json:"evidence"`
}

// BenchmarkCallSDKTyped: the same tool registered with the go-sdk's own
// typed mcp.AddTool (its schema inference, reflection and validation of
// input and output), same in-memory transport.
func BenchmarkCallSDKTyped(b *testing.B) {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: generated.ToolLookupIncident, Description: "Look up an incident."},
		func(ctx context.Context, _ *mcp.CallToolRequest, args sdkArgs) (*mcp.CallToolResult, sdkIncident, error) {
			inc, err := example.LookupIncident(ctx, example.LookupIncidentArgs{IncidentID: example.IncidentID(args.IncidentID)})
			return nil, sdkIncident{string(inc.IncidentID), inc.Service, inc.Severity, inc.Symptom, inc.Evidence}, err
		})
	benchCall(b, connect(b, s))
}

// BenchmarkCallSDKRaw is the transport floor: the same handler behind the
// go-sdk's raw Server.AddTool, which checks nothing (no schema on either
// side), decoding and encoding with encoding/json.
func BenchmarkCallSDKRaw(b *testing.B) {
	benchCall(b, connect(b, rawServer()))
}

func rawServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "raw", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: generated.ToolLookupIncident, Description: "Look up an incident.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args sdkArgs
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			inc, err := example.LookupIncident(ctx, example.LookupIncidentArgs{IncidentID: example.IncidentID(args.IncidentID)})
			if err != nil {
				return nil, err
			}
			out, err := json.Marshal(sdkIncident{string(inc.IncidentID), inc.Service, inc.Severity, inc.Symptom, inc.Evidence})
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}, StructuredContent: json.RawMessage(out)}, nil
		})
	return s
}

// BenchmarkCallHTTP: tools/call over loopback Streamable HTTP, stateless, from
// several concurrent clients, through keel and through the raw floor.
func BenchmarkCallHTTP(b *testing.B) {
	for _, c := range []struct {
		name    string
		handler func() (http.Handler, error)
	}{
		{"keel", func() (http.Handler, error) {
			s := mcpserver.New(quietExecutor(b, generated.ToolSet()), mcpserver.Options{})
			return mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
		}},
		{"sdk-raw", func() (http.Handler, error) {
			s := rawServer()
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}), nil
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			h, err := c.handler()
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			params := &mcp.CallToolParams{Name: generated.ToolLookupIncident, Arguments: map[string]any{"incident_id": "INC-001"}}
			b.SetParallelism(2) // 2 × GOMAXPROCS clients
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
				if err != nil {
					b.Error(err)
					return
				}
				defer cs.Close()
				for pb.Next() {
					res, err := cs.CallTool(context.Background(), params)
					if err != nil || res.IsError {
						b.Error(err, res)
						return
					}
				}
			})
		})
	}
}

// BenchmarkServeSessionlessCall: the server's own cost of one tools/call of
// the 2026-07-28 revision over HTTP (Stateless), its handler called with the
// request a go-sdk client sends, no client and no network: what keel spends
// from the body's bytes to the answer's.
func BenchmarkServeSessionlessCall(b *testing.B) {
	s := mcpserver.New(quietExecutor(b, generated.ToolSet()), mcpserver.Options{})
	h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"lookup_incident","arguments":{"incident_id":"INC-001"}}}`
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "tools/call")
		r.Header.Set("Mcp-Name", "lookup_incident")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "INC-001") {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}
