package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/answercall"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/keeltest"
)

// codes records each call's code, as the audit has it.
type codes struct {
	mu  sync.Mutex
	all []runtime.Code
}

func (c *codes) Begin(ctx context.Context, _ runtime.ToolCall) context.Context { return ctx }
func (c *codes) End(_ context.Context, rec *runtime.CallRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all = append(c.all, rec.Code)
}

func (c *codes) list() []runtime.Code {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]runtime.Code(nil), c.all...)
}

// seatServer serves "seat", whose handler asks the person for a seat.
func seatServer(t *testing.T, audit *codes) *mcpserver.Server {
	t.Helper()
	tool := runtime.NewTool(runtime.ToolInfo{Name: "seat", Version: "1", Effect: runtime.EffectRead, Description: "Picks a seat.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (map[string]string, error) {
			s, err := ask.Elicit[seat](ctx, "seat", "Which seat?")
			if err != nil {
				return nil, err
			}
			return map[string]string{"seat": s.Seat}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithObserver(audit))
	if err != nil {
		t.Fatal(err)
	}
	return mcpserver.New(exec, mcpserver.Options{Logger: slog.New(slog.DiscardHandler)})
}

// A client of every revision before 2026-07-28, in a session over HTTP
// and over stdio, whose first answer does not fit the form (a member the
// form lacks: the Go SDK's client lets it through, keel's reader does
// not): it is asked again by elicitation/create, never sent a
// 2026-07-28 input request in a result, and every round is audited. A
// 2025-03-26 client, which that revision gives no elicitation, is never
// sent one, whatever it declares: the call is input_unavailable.
func TestAnOffFormAnswerIsAskedAgainOnEveryRevision(t *testing.T) {
	t.Parallel()
	doors := map[string]func(t *testing.T, s *mcpserver.Server, c *mcp.Client, version string) *mcp.ClientSession{
		"HTTP session": func(t *testing.T, s *mcpserver.Server, c *mcp.Client, version string) *mcp.ClientSession {
			return httpSession(t, s, c, false, version)
		},
		"stdio": func(t *testing.T, s *mcpserver.Server, c *mcp.Client, version string) *mcp.ClientSession {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			go s.Run(ctx, &mcp.IOTransport{Reader: inR, Writer: outW})
			t.Cleanup(func() { cancel(); inW.Close(); outW.Close() })
			cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			return cs
		},
	}
	for door, open := range doors {
		for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
			t.Run(door+" "+version, func(t *testing.T) {
				t.Parallel()
				var asked atomic.Int32
				c := mcp.NewClient(&mcp.Implementation{Name: "answers", Version: "1"}, &mcp.ClientOptions{
					ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						if asked.Add(1) == 1 {
							return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"seat": "12A", "window": true}}, nil
						}
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"seat": "12A"}}, nil
					},
				})
				var sent atomic.Int32 // elicitation/create requests the client read
				c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						if method == "elicitation/create" {
							sent.Add(1)
						}
						return next(ctx, method, req)
					}
				})
				var audit codes
				cs := open(t, seatServer(t, &audit), c, version)
				defer cs.Close()
				if got := cs.InitializeResult().ProtocolVersion; got != version {
					t.Fatalf("negotiated %s", got)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "seat", Arguments: map[string]any{}})
				if err != nil {
					t.Fatal(err)
				}
				if res.InputRequests != nil || res.RequestState != "" {
					t.Fatalf("a %s client was sent a 2026-07-28 input request: %+v", version, res)
				}
				if version == "2025-03-26" {
					if asked.Load() != 0 || sent.Load() != 0 || !res.IsError || len(res.Content) == 0 {
						t.Fatalf("asked %d times; %+v", asked.Load(), res)
					}
					if text := res.Content[0].(*mcp.TextContent).Text; !json.Valid([]byte(text)) || !strings.Contains(text, `"input_unavailable"`) {
						t.Fatalf("answered %s", text)
					}
					if got := audit.list(); len(got) != 1 || got[0] != runtime.CodeInputUnavailable {
						t.Fatalf("audited %v", got)
					}
					return
				}
				data, _ := json.Marshal(res.StructuredContent)
				if res.IsError || string(data) != `{"seat":"12A"}` || asked.Load() != 2 {
					t.Fatalf("asked %d times; %+v %s", asked.Load(), res, data)
				}
				if sent.Load() != 2 { // the Go SDK's client answers a 2026-07-28 input request in a result by itself
					t.Fatalf("%d of the 2 questions came as elicitation/create", sent.Load())
				}
				want := []runtime.Code{runtime.CodeInputRequired, runtime.CodeInputRequired, ""}
				if got := audit.list(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
					t.Fatalf("audited %q, want %q", got, want)
				}
			})
		}
	}
}

// A client whose answers never fit is asked answercall.MaxRounds-1 times;
// then the call ends with the tool result input_required, which every
// revision reads, each round audited.
func TestAnAnswerThatNeverFitsEndsTheCall(t *testing.T) {
	t.Parallel()
	var asked atomic.Int32
	c := mcp.NewClient(&mcp.Implementation{Name: "answers", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"seat": "12A", "window": true}}, nil
		},
	})
	var audit codes
	cs := httpSession(t, seatServer(t, &audit), c, false, "2025-11-25")
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "seat", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.InputRequests != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"input_required"`) {
		t.Fatalf("%+v", res)
	}
	got := audit.list()
	if int(asked.Load()) != answercall.MaxRounds-1 || len(got) != answercall.MaxRounds {
		t.Fatalf("asked %d times, audited %v", asked.Load(), got)
	}
	for _, code := range got {
		if code != runtime.CodeInputRequired {
			t.Fatalf("audited %v", got)
		}
	}
}

// A 2025-03-26 client that declares elicitation anyway is never sent the
// approval question: its revision has no elicitation/create. The call
// reads approval_required, and nothing runs.
func TestNoApprovalQuestionTo20250326(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	srv := approvingReplica(t, memstore.NewReplayStore(), &ran, false)
	legacy := httptest.NewServer(noDiscover(srv.Config.Handler))
	t.Cleanup(legacy.Close)
	var asked atomic.Int32
	c := mcp.NewClient(&mcp.Implementation{Name: "approver", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: legacy.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-03-26"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_ticket", Arguments: json.RawMessage(ticketArgs)})
	if err != nil {
		t.Fatal(err)
	}
	if asked.Load() != 0 || ran.Load() != 0 || !strings.Contains(textOf(res), `"approval_required"`) {
		t.Fatalf("asked %d times, ran %d times; %s", asked.Load(), ran.Load(), textOf(res))
	}
}
