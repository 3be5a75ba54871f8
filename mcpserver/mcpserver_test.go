package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/internal/testing/jsontest"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
	"github.com/keelgen/keel/runtime/report"
)

func quietExecutor(t testing.TB, set runtime.ToolSet) *runtime.Executor {
	t.Helper()
	exec, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithDefaultTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

// allowWrites is the owner's hook: only sessions of a client named
// "approved" may run write tools. The client cannot set it.
func allowWrites(_ context.Context, req *mcp.CallToolRequest) runtime.ExecutionContext {
	name := ""
	if info := req.ClientInfo(); info != nil { // the session's, or the request's own (2026-07-28)
		name = info.Name
	}
	return runtime.ExecutionContext{AllowSideEffects: name == "approved", Principal: name}
}

// transports connects a client named clientName to s over each transport.
func transports(t *testing.T, s *mcpserver.Server, clientName string) map[string]*mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	sessions := map[string]*mcp.ClientSession{}

	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	sessions["in-memory (stdio framing)"] = cs

	h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	hs, err := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sessions["streamable HTTP"] = hs
	for _, s := range sessions {
		t.Cleanup(func() { s.Close() })
	}
	return sessions
}

func exampleServer(t *testing.T) *mcpserver.Server {
	return mcpserver.New(quietExecutor(t, generated.ToolSet()), mcpserver.Options{Context: allowWrites})
}

func TestListToolsShowsKeelSchemas(t *testing.T) {
	for name, cs := range transports(t, exampleServer(t), "lister") {
		t.Run(name, func(t *testing.T) {
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
				info := generated.ToolSet().Lookup(tool.Name).Info()
				if !jsontest.Equal(t, tool.InputSchema, info.InputSchema) || !jsontest.Equal(t, tool.OutputSchema, info.OutputSchema) {
					t.Errorf("%s: schemas differ from keel's:\n%v\n%v", tool.Name, tool.InputSchema, tool.OutputSchema)
				}
				a := tool.Annotations
				read := info.Effect == runtime.EffectRead
				if a == nil || a.ReadOnlyHint != read || a.IdempotentHint != read || a.DestructiveHint == nil || *a.DestructiveHint == read ||
					a.OpenWorldHint == nil || !*a.OpenWorldHint { // open-world unless the directive says world=closed
					t.Errorf("%s: annotations %+v", tool.Name, a)
				}
				// The description the model reads names the declared codes.
				if want := info.Description + " Errors it may return: incident_not_found."; tool.Description != want {
					t.Errorf("%s: description %q", tool.Name, tool.Description)
				}
			}
			if !slices.Equal(names, []string{generated.ToolCreateTicket, generated.ToolLookupIncident}) {
				t.Fatalf("tools %v", names)
			}
		})
	}
}

// callResult returns the keel result JSON a failed call carries.
func keelResult(t *testing.T, res *mcp.CallToolResult) runtime.ToolResult {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content %v", res.Content)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T", res.Content[0])
	}
	var r runtime.ToolResult
	if err := json.Unmarshal([]byte(text.Text), &r); err != nil {
		t.Fatalf("content is not a keel result: %v\n%s", err, text.Text)
	}
	return r
}

func TestCallsThroughTheExecutor(t *testing.T) {
	ctx := context.Background()
	for _, client := range []string{"plain", "approved"} {
		for name, cs := range transports(t, exampleServer(t), client) {
			t.Run(client+"/"+name, func(t *testing.T) {
				ok, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: generated.ToolLookupIncident, Arguments: map[string]any{"incident_id": "INC-001"}})
				if err != nil || ok.IsError {
					t.Fatalf("valid call: %v %+v", err, ok)
				}
				want := `{"incident_id":"INC-001","service":"auth-api","severity":"high","symptom":"登录接口持续返回 502","evidence":["auth-api timeout","database pool exhausted"]}`
				if !jsontest.Equal(t, ok.StructuredContent, json.RawMessage(want)) || ok.Content[0].(*mcp.TextContent).Text != want {
					t.Fatalf("structured %v, text %v", ok.StructuredContent, ok.Content)
				}

				for _, c := range []struct {
					tool string
					args map[string]any
					code runtime.Code
				}{
					{generated.ToolLookupIncident, map[string]any{"incident_id": 42}, runtime.CodeInvalidArguments},
					{generated.ToolLookupIncident, map[string]any{"incident_id": "INC-404"}, "incident_not_found"},
				} {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
					if err != nil || !res.IsError || keelResult(t, res).Code() != c.code {
						t.Errorf("%s %v: err %v, result %+v", c.tool, c.args, err, res)
					}
				}

				write, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: generated.ToolCreateTicket, Arguments: map[string]any{"incident_id": "INC-001", "summary": "raise pool size"}})
				if err != nil {
					t.Fatal(err)
				}
				if client == "approved" && write.IsError {
					t.Errorf("approved write failed: %+v", keelResult(t, write))
				}
				if client == "plain" && (!write.IsError || keelResult(t, write).Code() != runtime.CodeApprovalRequired) {
					t.Errorf("unapproved write: %+v", write)
				}

				_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete_prod", Arguments: map[string]any{}})
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("unknown tool: %v", err)
				}
			})
		}
	}
}

func faulty(name string, h runtime.Handler) *runtime.Tool {
	return runtime.NewTool(runtime.ToolInfo{Name: name, Version: "1", Effect: runtime.EffectRead, Description: name,
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":0}},"required":["n"],"additionalProperties":false}`)}, h)
}

type none struct{}
type out struct {
	N int `json:"n"`
}

func TestEveryFailureCodeIsAnErrorResult(t *testing.T) {
	t.Parallel()
	// A tool set whose handlers fail in each way the executor names.
	set := keeltest.Of(
		faulty("bad_output", runtime.Handle(func(context.Context, none) (out, error) { return out{N: -1}, nil })),
		faulty("panics", runtime.Handle(func(context.Context, none) (out, error) { panic("at /srv/secret.go:1") })),
		faulty("slow", runtime.Handle(func(ctx context.Context, _ none) (out, error) { <-ctx.Done(); return out{}, ctx.Err() })),
	)
	s := mcpserver.New(quietExecutor(t, set), mcpserver.Options{})
	for name, cs := range transports(t, s, "faults") {
		for tool, code := range map[string]runtime.Code{"bad_output": runtime.CodeInvalidToolOutput, "panics": runtime.CodeToolInternalError, "slow": runtime.CodeToolTimeout} {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
			if err != nil || !res.IsError {
				t.Fatalf("%s %s: %v %+v", name, tool, err, res)
			}
			r := keelResult(t, res)
			if r.Code() != code || strings.Contains(res.Content[0].(*mcp.TextContent).Text, "secret") {
				t.Errorf("%s %s: %+v", name, tool, r.Error)
			}
		}
	}
}

// The hints and title a directive states reach tools/list as stated.
func TestStatedHintsReachTheClient(t *testing.T) {
	no, yes := false, true
	info := generated.ToolSet().Lookup(generated.ToolCreateTicket).Info()
	info.Title = "Open a ticket"
	info.Hints = runtime.Hints{Destructive: &no, Idempotent: &yes, OpenWorld: &no}
	tool := mcpserver.Tool(info)
	a := tool.Annotations
	if tool.Title != "Open a ticket" || a.Title != "Open a ticket" || a.ReadOnlyHint || !a.IdempotentHint ||
		a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
		t.Fatalf("tool %+v, annotations %+v", tool, a)
	}
}

// A client that cancels its tools/call (the SDK sends
// notifications/cancelled) ends the handler's context, and the audit log
// records the call as tool_cancelled, not tool_timeout.
func TestClientCancellationReachesTheHandler(t *testing.T) {
	for _, transport := range []string{"in-memory (stdio framing)", "streamable HTTP", "stateless HTTP"} {
		t.Run(transport, func(t *testing.T) {
			started, ended := make(chan struct{}), make(chan struct{})
			tool := runtime.NewTool(runtime.ToolInfo{Name: "wait", Version: "1", Effect: runtime.EffectRead, Description: "Waits.", Timeout: 10 * time.Second,
				InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
				runtime.Handle(func(ctx context.Context, _ struct{}) (struct{}, error) {
					close(started)
					<-ctx.Done()
					close(ended)
					return struct{}{}, ctx.Err()
				}))
			set := keeltest.Of(tool)
			var audit bytes.Buffer
			var mu sync.Mutex
			exec, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)),
				runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(lockedWriter{&mu, &audit}, nil)))))
			if err != nil {
				t.Fatal(err)
			}
			s := mcpserver.New(exec, mcpserver.Options{})
			var cs *mcp.ClientSession
			if transport == "stateless HTTP" {
				// No session: the client's notifications/cancelled reaches no
				// call, but the call's own request ends with the client's.
				cs, err = mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(),
					&mcp.StreamableClientTransport{Endpoint: serve(t, s, mcpserver.HTTPOptions{Stateless: true}).URL}, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
			} else {
				cs = transports(t, s, "c")[transport]
			}
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-started; cancel() }()
			params := &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}}
			params.SetProgressToken("w") // over HTTP, the call's own event stream
			if _, err := cs.CallTool(ctx, params); err == nil {
				t.Fatal("a cancelled call returned a result")
			}
			select {
			case <-ended:
			case <-time.After(5 * time.Second):
				t.Fatal("the handler's context did not end")
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				mu.Lock()
				logged := audit.String()
				mu.Unlock()
				if strings.Contains(logged, `"code":"tool_cancelled"`) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the audit log has no tool_cancelled:\n%s", logged)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A handler's reports reach a client whose tools/call carries a progress
// token, as notifications/progress with that token, rate-limited; the call
// then completes.
func TestProgressReachesTheClient(t *testing.T) {
	t.Parallel()
	tool := runtime.NewTool(runtime.ToolInfo{Name: "deploy", Version: "1", Effect: runtime.EffectRead, Description: "Deploys.", Timeout: 10 * time.Second,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (struct{}, error) {
			for i := 1; i <= 3; i++ {
				time.Sleep(report.ProgressInterval + 10*time.Millisecond)
				report.Progress(ctx, float64(i), 3, fmt.Sprintf("step %d of 3", i))
			}
			return struct{}{}, nil
		}))
	set := keeltest.Of(tool)
	s := mcpserver.New(quietExecutor(t, set), mcpserver.Options{})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	transports := map[string]mcp.Transport{
		"in-memory (stdio framing)": ct,
		// Over Streamable HTTP a call with a progress token is answered as
		// an event stream: its notifications, then its result, with a
		// heartbeat comment line whenever 20 ms pass with nothing written.
		"streamable HTTP": &mcp.StreamableClientTransport{Endpoint: serve(t, s, mcpserver.HTTPOptions{Heartbeat: 20 * time.Millisecond}).URL},
		"stateless HTTP":  &mcp.StreamableClientTransport{Endpoint: serve(t, s, mcpserver.HTTPOptions{Stateless: true, Heartbeat: 20 * time.Millisecond}).URL},
	}
	for name, transport := range transports {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var got []*mcp.ProgressNotificationParams
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					got = append(got, req.Params)
					mu.Unlock()
				}})
			cs, err := client.Connect(context.Background(), transport, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{}}
			params.SetProgressToken("deploy-1")
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			deadline := time.Now().Add(2 * time.Second)
			for {
				mu.Lock()
				n := len(got)
				mu.Unlock()
				if n == 3 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 3 || got[0].ProgressToken != "deploy-1" || got[0].Progress != 1 || got[2].Progress != 3 || got[2].Total != 3 || got[2].Message != "step 3 of 3" {
				t.Fatalf("progress %+v", got)
			}
		})
	}
}

// A handler's report.Log reaches a client that asked for a level, as
// notifications/message at or above it, named by the tool, before the
// result; a client that asked for none hears nothing.
func TestLogsReachTheClient(t *testing.T) {
	t.Parallel()
	tool := runtime.NewTool(runtime.ToolInfo{Name: "migrate", Version: "1", Effect: runtime.EffectRead, Description: "Migrates.", Timeout: 10 * time.Second,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (struct{}, error) {
			report.Log(ctx, report.LogDebug, "connecting")
			report.Log(ctx, report.LogInfo, "Tool execution started")
			time.Sleep(50 * time.Millisecond)
			report.Log(ctx, report.LogInfo, "Tool processing data")
			time.Sleep(50 * time.Millisecond)
			report.Log(ctx, report.LogWarning, "Tool execution completed")
			return struct{}{}, nil
		}))
	set := keeltest.Of(tool)
	s := mcpserver.New(quietExecutor(t, set), mcpserver.Options{})
	transports := map[string]func() mcp.Transport{
		"in-memory (stdio framing)": func() mcp.Transport {
			st, ct := mcp.NewInMemoryTransports()
			if _, err := s.Connect(context.Background(), st, nil); err != nil {
				t.Fatal(err)
			}
			return ct
		},
		"streamable HTTP": func() mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: serve(t, s, mcpserver.HTTPOptions{}).URL}
		},
		"stateless HTTP": func() mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: serve(t, s, mcpserver.HTTPOptions{Stateless: true}).URL}
		},
	}
	for name, transport := range transports {
		for _, level := range []mcp.LoggingLevel{"info", ""} {
			t.Run(fmt.Sprintf("%s, level %q", name, level), func(t *testing.T) {
				var mu sync.Mutex
				var got []string
				client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
					LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
						mu.Lock()
						got = append(got, fmt.Sprintf("%s %s %v", req.Params.Level, req.Params.Logger, req.Params.Data))
						mu.Unlock()
					}})
				cs, err := client.Connect(context.Background(), transport(), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				// Before protocol 2026-07-28 the client sets its session's
				// level (logging/setLevel); from it on, the level travels in
				// each request's _meta.
				params := &mcp.CallToolParams{Name: "migrate"}
				version := cs.InitializeResult().ProtocolVersion
				switch {
				case level == "":
				case version < "2026-07-28":
					if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: level}); err != nil {
						t.Fatal(err)
					}
				default:
					params.Meta = mcp.Meta{mcp.MetaKeyLogLevel: string(level)}
				}
				res, err := cs.CallTool(context.Background(), params)
				if err != nil || res.IsError {
					t.Fatalf("call: %v %+v", err, res)
				}
				want := []string{"info migrate Tool execution started", "info migrate Tool processing data", "warning migrate Tool execution completed"}
				if level == "" {
					want = nil
				}
				// The server sends each before the result; the client may
				// hand them to its handler after it returns the result.
				wait := time.Second
				if want == nil {
					wait = 200 * time.Millisecond
				}
				for deadline := time.Now().Add(wait); ; time.Sleep(10 * time.Millisecond) {
					mu.Lock()
					n := len(got)
					mu.Unlock()
					if n >= 3 || time.Now().After(deadline) {
						break
					}
				}
				mu.Lock()
				defer mu.Unlock()
				if !slices.Equal(got, want) {
					t.Fatalf("logs: %q, want %q", got, want)
				}
			})
		}
	}
}

// Every hint is on the wire, false ones too: a host that fails closed on a
// missing hint reads each as stated, not as absent.
func TestEveryHintOnTheWire(t *testing.T) {
	for _, tool := range generated.ToolSet().Tools() {
		b, err := json.Marshal(mcpserver.Tool(tool.Info()).Annotations)
		if err != nil {
			t.Fatal(err)
		}
		var hints map[string]any
		if err := json.Unmarshal(b, &hints); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := hints[k].(bool); !ok {
				t.Errorf("%s: %s missing from %s", tool.Info().Name, k, b)
			}
		}
	}
}

// Over stdio's real framing, a message that names a member of its own, of
// its params or of their _meta twice runs nothing: the SDK's decoder would
// run the last "method" (ping, then tools/call), the last "params" and
// the last "id". It is answered "Invalid request." under its id, or under
// null when it names none or names it twice, and the stream goes on.
func TestEnvelopeDuplicatesOverStdioFraming(t *testing.T) {
	var ran atomic.Int32
	set := counted(t, &ran)
	s := mcpserver.New(quietExecutor(t, set), mcpserver.Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, &mcp.IOTransport{Reader: inR, Writer: outW})
	lines := bufio.NewScanner(outR)
	send := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	reply := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatal("no reply", lines.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	send(initialize)
	if r := reply(); r["error"] != nil {
		t.Fatal(r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const call = `"params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"}}`
	for i, msg := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"ping","method":"tools/call",` + call + `}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"},` + call + `}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"},` +
			`"_meta":{"keel/call_id":"a","keel/call_id":"b"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call",` + call + `,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","method":"tools/call","id":6,` + call + `}`,
	} {
		send(msg)
		r := reply()
		e, _ := r["error"].(map[string]any)
		if r["id"] != float64(i+2) || e == nil || e["code"] != float64(-32600) || e["message"] != "Invalid request." {
			t.Errorf("%s: %v", msg, r)
		}
	}
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":7,"id":8,"method":"tools/call",` + call + `}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{},"params":{}}`,
	} {
		send(msg)
		if r := reply(); r["id"] != nil || r["error"] == nil {
			t.Errorf("%s: %v", msg, r)
		}
	}
	send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if r := reply(); r["id"] != float64(9) || r["error"] != nil {
		t.Fatalf("the stream after refused messages: %v", r)
	}
	if ran.Load() != 0 {
		t.Fatalf("%d handler runs for refused messages", ran.Load())
	}
	send(`{"jsonrpc":"2.0","id":10,"method":"tools/call",` + call + `}`)
	if r := reply(); r["id"] != float64(10) || r["error"] != nil || ran.Load() != 1 {
		t.Fatalf("a valid call after them: %v, %d runs", r, ran.Load())
	}
}
