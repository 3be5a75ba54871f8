package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/keelgen/keel/mcpserver/taskstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/keeltest"
)

// seat is a form: which seat the person wants.
type seat struct {
	Seat string `json:"seat"`
}

func (*seat) ElicitSchema() []byte {
	return []byte(`{"type":"object","properties":{"seat":{"type":"string","minLength":2,"maxLength":3}},"required":["seat"]}`)
}

func (s *seat) ReadElicit(content []byte) error { return ask.Decode(s.ElicitSchema(), content, s) }

// askingServer serves book (bookTool).
func askingServer(t *testing.T, done *atomic.Int32) *mcpserver.Server {
	t.Helper()
	exec, err := runtime.NewExecutor(keeltest.Of(bookTool(done)), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return mcpserver.New(exec, mcpserver.Options{StateSecret: []byte("0123456789abcdef0123456789abcdef")})
}

// bookTool is book: its handler asks the person for a seat, the client's
// model for a note and the client for its roots, all at once, and counts
// the calls that ran to the end.
func bookTool(done *atomic.Int32) *runtime.Tool {
	return runtime.NewTool(runtime.ToolInfo{Name: "book", Version: "1", Effect: runtime.EffectRead, Description: "Books a seat.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (map[string]string, error) {
			s, err1 := ask.Elicit[seat](ctx, "seat", "Which seat?")
			note, err2 := ask.Sample(ctx, "note", []ask.Message{{Role: "user", Text: "A note for the booking"}}, 20)
			roots, err3 := ask.ListRoots(ctx, "roots")
			if err := errors.Join(err1, err2, err3); err != nil {
				return nil, err
			}
			done.Add(1)
			return map[string]string{"seat": s.Seat, "note": note.Text, "root": roots[0].URI}, nil
		}))
}

// answeringClient answers every question: the seat 12A, the note "aisle",
// the root file:///trip. (The Go SDK's client checks a form's answer
// against its schema itself; an answer that does not read is asked again
// in runtime/ask's tests.)
func answeringClient(asked *[]string) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "answers", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			*asked = append(*asked, req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"seat": "12A"}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: "aisle"}, Model: "test"}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///trip", Name: "trip"})
	return c
}

// A handler's typed questions answered on every MCP door: over HTTP to a
// 2026-07-28 client (input requests in the result, its signed state sent
// back), in a 2025-11-25 session (requests on the call's stream) and over
// stdio. The call completes once, with the answers read into their
// types.
func TestAHandlersQuestionsOnEveryDoor(t *testing.T) {
	doors := map[string]func(t *testing.T, s *mcpserver.Server, c *mcp.Client) *mcp.ClientSession{
		"HTTP, 2026-07-28, stateless": func(t *testing.T, s *mcpserver.Server, c *mcp.Client) *mcp.ClientSession {
			return httpSession(t, s, c, true, "")
		},
		"HTTP, 2025-11-25 session": func(t *testing.T, s *mcpserver.Server, c *mcp.Client) *mcp.ClientSession {
			return httpSession(t, s, c, false, "2025-11-25")
		},
		"stdio": func(t *testing.T, s *mcpserver.Server, c *mcp.Client) *mcp.ClientSession {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			go s.Run(ctx, &mcp.IOTransport{Reader: inR, Writer: outW})
			t.Cleanup(func() { cancel(); inW.Close(); outW.Close() })
			cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return cs
		},
	}
	for name, open := range doors {
		t.Run(name, func(t *testing.T) {
			var done atomic.Int32
			var asked []string
			cs := open(t, askingServer(t, &done), answeringClient(&asked))
			defer cs.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("%v %+v", err, res)
			}
			data, _ := json.Marshal(res.StructuredContent)
			if string(data) != `{"note":"aisle","root":"file:///trip","seat":"12A"}` || done.Load() != 1 {
				t.Fatalf("ran %d to the end; %s", done.Load(), data)
			}
			if len(asked) != 1 || asked[0] != "Which seat?" {
				t.Fatalf("the person was asked %q", asked)
			}
		})
	}
}

// httpSession connects c to s over Streamable HTTP, stateless or with
// sessions, at the revision given ("" for the client's latest).
func httpSession(t *testing.T, s *mcpserver.Server, c *mcp.Client, stateless bool, version string) *mcp.ClientSession {
	t.Helper()
	h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Stateless: stateless, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// A request state is bound to its call and caller, signed and spent: one
// altered, sent with other arguments, or sent twice is -32602, and
// nothing runs.
func TestAnInputStateIsSignedBoundAndSpent(t *testing.T) {
	var done atomic.Int32
	h, err := mcpserver.HTTPHandler(askingServer(t, &done), mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	call := func(args, extra string) (reply struct {
		Result struct {
			ResultType   string `json:"resultType"`
			RequestState string `json:"requestState"`
		}
		Error *struct{ Code int64 }
	}) {
		t.Helper()
		params := `{` + strings.Replace(meta2026("2026-07-28"), `clientCapabilities":{}`, `clientCapabilities":{"elicitation":{},"sampling":{},"roots":{}}`, 1) +
			`,"name":"book","arguments":` + args + extra + `}`
		r := post(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`,
			map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "book"})
		if err := json.Unmarshal([]byte(r.body), &reply); err != nil {
			t.Fatalf("%d %s", r.status, r.body)
		}
		return reply
	}
	first := call(`{}`, "")
	if first.Result.ResultType != "input_required" || first.Result.RequestState == "" {
		t.Fatalf("the first round: %+v", first)
	}
	answers := `,"inputResponses":{"seat":{"action":"accept","content":{"seat":"12A"}},` +
		`"note":{"role":"assistant","content":{"type":"text","text":"aisle"},"model":"m"},"roots":{"roots":[{"uri":"file:///trip"}]}}`
	state := first.Result.RequestState
	for name, c := range map[string]struct{ args, state string }{
		"altered":         {`{}`, state[:len(state)-2] + "AA"},
		"other arguments": {`{"x":1}`, state},
		"not keel's":      {`{}`, "i1.e30.AAAA"},
	} {
		if r := call(c.args, `,"requestState":"`+c.state+`"`+answers); r.Error == nil || r.Error.Code != -32602 || done.Load() != 0 {
			t.Errorf("%s: %+v, ran %d", name, r, done.Load())
		}
	}
	if r := call(`{}`, `,"requestState":"`+state+`"`+answers); r.Error != nil || r.Result.ResultType == "input_required" || done.Load() != 1 {
		t.Fatalf("answered: %+v, ran %d", r, done.Load())
	}
	if r := call(`{}`, `,"requestState":"`+state+`"`+answers); r.Error == nil || r.Error.Code != -32602 || done.Load() != 1 {
		t.Fatalf("the state sent again: %+v, ran %d", r, done.Load())
	}
}

// A task's handler asks: the task waits input_required with its three
// requests; the client answers one, and the task waits on for the other
// two, its record holding the first answer sealed; answered in full, it
// completes once, with the answers read into their types.
func TestATasksHandlerAsksAndIsAnsweredInParts(t *testing.T) {
	var done atomic.Int32
	store := taskstore.NewMemory()
	exec, err := runtime.NewExecutor(keeltest.Of(bookTool(&done)), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	s := mcpserver.New(exec, mcpserver.Options{StateSecret: []byte("0123456789abcdef0123456789abcdef"),
		Tasks: &mcpserver.Tasks{Store: store, PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
			Mode: func(runtime.ToolInfo) mcpserver.TaskMode { return mcpserver.TaskRequired }}})
	h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rpc := answeringRPC(t, srv.URL)
	var id string
	json.Unmarshal(rpc("tools/call", `"name":"book","arguments":{}`, "book")["taskId"], &id)
	waiting := func(want ...string) {
		t.Helper()
		waitFor(t, "the task to wait for "+strings.Join(want, ", "), func() bool {
			r := rpc("tasks/get", `"taskId":"`+id+`"`, id)
			var keys map[string]json.RawMessage
			json.Unmarshal(r["inputRequests"], &keys)
			if string(r["status"]) != `"input_required"` || len(keys) != len(want) {
				return false
			}
			for _, k := range want {
				if keys[k] == nil {
					return false
				}
			}
			return true
		})
	}
	waiting("seat", "note", "roots")
	update := func(responses string) {
		t.Helper()
		if r := rpc("tasks/update", `"taskId":"`+id+`","inputResponses":`+responses, id); string(r["resultType"]) != `"complete"` {
			t.Fatalf("tasks/update: %v", r)
		}
	}
	update(`{"seat":{"action":"accept","content":{"seat":"12A"}},"unasked":{"action":"accept","content":{}}}`)
	waiting("note", "roots")
	rec, _ := store.Task(context.Background(), id)
	if rec.Answers == nil || strings.Contains(string(rec.Answers), "12A") || done.Load() != 0 {
		t.Fatalf("after one answer: ran %d; the record's answers %s", done.Load(), rec.Answers)
	}
	update(`{"note":{"role":"assistant","content":{"type":"text","text":"aisle"},"model":"m"},"roots":{"roots":[{"uri":"file:///trip"}]}}`)
	waitFor(t, "the task to complete", func() bool {
		r := rpc("tasks/get", `"taskId":"`+id+`"`, id)
		return string(r["status"]) == `"completed"` && strings.Contains(string(r["result"]), `"seat":"12A"`)
	})
	if done.Load() != 1 {
		t.Fatalf("ran %d times to the end", done.Load())
	}
}

// answeringRPC sends requests of the 2026-07-28 revision to url from a
// client that takes elicitation, sampling, roots and tasks, and returns
// each result (a JSON-RPC error fails the test).
func answeringRPC(t *testing.T, url string) func(method, params, name string) map[string]json.RawMessage {
	return func(method, params, name string) map[string]json.RawMessage {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}},` + params + `}}`
		r := post(t, url, body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name})
		var reply struct{ Result map[string]json.RawMessage }
		if json.Unmarshal([]byte(r.body), &reply) != nil || reply.Result == nil {
			t.Fatalf("%s: %d %s", method, r.status, r.body)
		}
		return reply.Result
	}
}

// createdIDs is a task store that remembers the tasks created in it.
type createdIDs struct {
	taskstore.Store
	mu  sync.Mutex
	ids []string
}

func (s *createdIDs) CreateTask(ctx context.Context, t taskstore.Record) error {
	s.mu.Lock()
	s.ids = append(s.ids, t.ID)
	s.mu.Unlock()
	return s.Store.CreateTask(ctx, t)
}

// A task tool whose questions come before its work (Tasks.AskFirst):
// its first tools/call is answered as a call is, an InputRequiredResult
// that names no task, and the task that call created is withdrawn; the
// call that brings the answers is answered with the task, which completes
// once with them (SEP-2663's composition). A handler that asks only after
// the window is a task at once, and its question is the task's.
func TestQuestionsBeforeTheTaskExists(t *testing.T) {
	var done atomic.Int32
	store := &createdIDs{Store: taskstore.NewMemory()}
	late := runtime.NewTool(runtime.ToolInfo{Name: "late", Version: "1", Effect: runtime.EffectRead, Description: "Asks late.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (map[string]string, error) {
			time.Sleep(300 * time.Millisecond)
			s, err := ask.Elicit[seat](ctx, "seat", "Which seat?")
			return map[string]string{"seat": s.Seat}, err
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(bookTool(&done), late), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	s := mcpserver.New(exec, mcpserver.Options{StateSecret: []byte("0123456789abcdef0123456789abcdef"),
		Tasks: &mcpserver.Tasks{Store: store, PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
			Mode:     func(runtime.ToolInfo) mcpserver.TaskMode { return mcpserver.TaskRequired },
			AskFirst: func(runtime.ToolInfo) time.Duration { return 100 * time.Millisecond }}})
	h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rpc := answeringRPC(t, srv.URL)

	first := rpc("tools/call", `"name":"book","arguments":{}`, "book")
	var state string
	json.Unmarshal(first["requestState"], &state)
	if string(first["resultType"]) != `"input_required"` || first["taskId"] != nil || state == "" || len(store.ids) != 1 {
		t.Fatalf("round 1: %v (tasks created: %d)", first, len(store.ids))
	}
	if _, err := store.Task(context.Background(), store.ids[0]); !errors.Is(err, taskstore.ErrNoTask) {
		t.Errorf("the task round 1 created is still there: %v", err)
	}
	answers := `"inputResponses":{"seat":{"action":"accept","content":{"seat":"12A"}},` +
		`"note":{"role":"assistant","content":{"type":"text","text":"aisle"},"model":"m"},"roots":{"roots":[{"uri":"file:///trip"}]}}`
	second := rpc("tools/call", `"name":"book","arguments":{},"requestState":"`+state+`",`+answers, "book")
	var id string
	json.Unmarshal(second["taskId"], &id)
	if string(second["resultType"]) != `"task"` || id == "" || second["requestState"] != nil || second["inputRequests"] != nil {
		t.Fatalf("round 2: %v", second)
	}
	waitFor(t, "the task to complete", func() bool {
		r := rpc("tasks/get", `"taskId":"`+id+`"`, id)
		return string(r["status"]) == `"completed"` && strings.Contains(string(r["result"]), `"seat":"12A"`)
	})
	if done.Load() != 1 {
		t.Fatalf("ran %d times to the end", done.Load())
	}

	// Past the window: the call is answered with the task, whose question
	// is then the task's.
	lateCall := rpc("tools/call", `"name":"late","arguments":{}`, "late")
	json.Unmarshal(lateCall["taskId"], &id)
	if string(lateCall["resultType"]) != `"task"` || id == "" {
		t.Fatalf("a late question: %v", lateCall)
	}
	waitFor(t, "the late task to wait for its question", func() bool {
		return string(rpc("tasks/get", `"taskId":"`+id+`"`, id)["status"]) == `"input_required"`
	})
}
