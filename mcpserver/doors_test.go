package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/mcpserver/taskstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
	"github.com/keelgen/keel/runtime/keeltest"
	"github.com/keelgen/keel/runtime/keeltest/doortest"
)

// The doors of this package: the corpus through each, as a client sends it.

func doorServer(t *testing.T) (*doortest.Fixture, *mcpserver.Server) {
	return doorServerWith(t, nil)
}

// doorServerWith is doorServer whose calls of known tools take the SDK's
// path when approvals is set (mcpserver.Options.Approvals).
func doorServerWith(t *testing.T, approvals *mcpserver.Approvals) (*doortest.Fixture, *mcpserver.Server) {
	t.Helper()
	f, err := doortest.New()
	if err != nil {
		t.Fatal(err)
	}
	s := mcpserver.New(f.Exec, mcpserver.Options{Approvals: approvals, Context: func(context.Context, *mcp.CallToolRequest) runtime.ExecutionContext {
		return doortest.Caller()
	}})
	return f, s
}

// rawLine is a stdio client that writes lines and reads the replies.
type rawLine struct {
	t       *testing.T
	in      io.Writer
	replies chan []byte // read apart from the writes: the server may answer a frame while the client writes the next
	next    int
}

func newRawLine(t *testing.T, in io.Writer, out io.Reader) *rawLine {
	c := &rawLine{t: t, in: in, replies: make(chan []byte, 4096)}
	go func() {
		lines := bufio.NewScanner(out)
		lines.Buffer(nil, 64<<20)
		for lines.Scan() {
			c.replies <- append([]byte(nil), lines.Bytes()...)
		}
		close(c.replies)
	}()
	return c
}

func (c *rawLine) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal("the server stopped reading:", err)
	}
}

// reply reads the next message the server wrote.
func (c *rawLine) reply() map[string]any {
	c.t.Helper()
	var line []byte
	select {
	case l, ok := <-c.replies:
		if !ok {
			c.t.Fatal("the server wrote nothing more")
		}
		line = l
	case <-time.After(30 * time.Second):
		c.t.Fatal("no reply in 30 s")
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Fatalf("a reply that is not JSON: %q", line)
	}
	return m
}

// ping proves the server still answers, returning the errors it wrote
// before the pong.
func (c *rawLine) ping() []map[string]any {
	c.t.Helper()
	c.next++
	id := float64(1000000 + c.next)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, int(id)))
	var before []map[string]any
	for {
		r := c.reply()
		if r["id"] == id {
			if r["error"] != nil {
				c.t.Fatalf("ping answered %v", r)
			}
			return before
		}
		before = append(before, r)
	}
}

func startStdio(t *testing.T, s *mcpserver.Server) (*rawLine, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Run(ctx, &mcp.IOTransport{Reader: inR, Writer: outW})
	}()
	t.Cleanup(func() { cancel(); inW.Close(); outR.Close() })
	c := newRawLine(t, inW, outR)
	c.send(initialize)
	if r := c.reply(); r["error"] != nil {
		t.Fatal(r)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c, done
}

// callLine is a tools/call frame for c, with its arguments as raw bytes.
func callLine(id int, callID string, c doortest.Case) string {
	name, _ := jsontext.AppendQuote(nil, c.Tool)
	args := ""
	if !c.NoArguments {
		args = `,"arguments":` + c.Arguments
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s%s,"_meta":{"keel/call_id":%q}}}`, id, name, args, callID)
}

// inLine reports whether c's arguments can stand in a JSON-RPC line: one
// JSON value (invalid UTF-8 passes, for the executor) with no line end.
func inLine(c doortest.Case) bool {
	return c.NoArguments || (jsontext.Value(c.Arguments).IsValid(jsontext.AllowInvalidUTF8(true)) && !strings.ContainsAny(c.Arguments, "\r\n") && strings.TrimSpace(c.Arguments) == c.Arguments)
}

// answerOf is the keel code and the client's text of a tools/call reply.
func answerOf(r map[string]any) (runtime.Code, string, error) {
	raw, _ := json.Marshal(r)
	if e, ok := r["error"].(map[string]any); ok {
		msg, _ := e["message"].(string)
		switch code, _ := e["code"].(float64); {
		case code == -32602 && strings.HasPrefix(msg, "No tool with that name"):
			return runtime.CodeUnknownTool, string(raw), nil
		default:
			return "", string(raw), fmt.Errorf("a protocol error, not keel's answer: %s", raw)
		}
	}
	res, _ := r["result"].(map[string]any)
	if res == nil {
		return "", string(raw), fmt.Errorf("no result: %s", raw)
	}
	if res["isError"] != true {
		return "", string(raw), nil
	}
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return "", string(raw), fmt.Errorf("an error result with no content: %s", raw)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	var kr runtime.ToolResult
	if err := json.Unmarshal([]byte(text), &kr); err != nil || kr.Error == nil {
		return "", string(raw), fmt.Errorf("an error result that is not keel's: %s", raw)
	}
	return kr.Error.Code, string(raw), nil
}

// checkCall checks one call's answer as the client read it (err: it was
// no keel answer at all) and its audit record.
func checkCall(t *testing.T, f *doortest.Fixture, tc doortest.Case, callID string, code runtime.Code, text string, err error) {
	t.Helper()
	if err == nil {
		err = doortest.CheckAnswer(tc, code, text)
	}
	if err != nil {
		t.Error(err)
	}
	if !f.Audited(callID) {
		t.Errorf("%s: no audit record for %s", tc.Name, callID)
	}
}

// The corpus through stdio: every call answered with keel's code and
// audited, every malformed frame answered, and the stream goes on.
func TestDoorStdio(t *testing.T) {
	f, s := doorServer(t)
	c, done := startStdio(t, s)

	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var listed []string
	for _, tool := range c.reply()["result"].(map[string]any)["tools"].([]any) {
		listed = append(listed, tool.(map[string]any)["name"].(string))
	}
	if err := doortest.CheckListed(listed); err != nil {
		t.Error(err)
	}

	sent := 0
	for i, tc := range doortest.Calls() {
		if !inLine(tc) {
			continue // not a JSON-RPC message: a frame (below)
		}
		callID := fmt.Sprintf("stdio-%d", i)
		c.send(callLine(10+i, callID, tc))
		code, text, err := answerOf(c.reply())
		checkCall(t, f, tc, callID, code, text, err)
		sent++
	}
	for _, fr := range doortest.Frames() {
		c.send(fr.Bytes)
		answers := c.ping()
		if fr.Name == "response to nothing" {
			continue // a response is answered by nothing
		}
		if len(answers) == 0 {
			// A frame the front passed on (a request the SDK refuses) is
			// answered by the SDK's own goroutine, perhaps after the pong.
			answers = append(answers, c.reply())
		}
		if len(answers) != 1 {
			t.Errorf("frame %s: answered %v, want one error", fr.Name, answers)
			continue
		}
		e, _ := answers[0]["error"].(map[string]any)
		if code, _ := e["code"].(float64); code != -32700 && code != -32600 && code != -32602 && code != -32601 {
			t.Errorf("frame %s: answered %v", fr.Name, answers[0])
		}
		if raw, _ := json.Marshal(answers[0]); strings.Contains(string(raw), "json:") {
			t.Errorf("frame %s: the answer leaks decoder text: %s", fr.Name, raw)
		}
	}
	c.send(callLine(5000, "stdio-after", doortest.Calls()[0]))
	if code, text, err := answerOf(c.reply()); err != nil || code != "" {
		t.Fatalf("a valid call after the corpus: %s %v", text, err)
	}
	select {
	case err := <-done:
		t.Fatalf("the server stopped: %v", err)
	default:
	}
	t.Logf("stdio: %d calls and %d frames", sent, len(doortest.Frames()))
}

// Over the frame limit: the line is dropped to its newline, never held,
// and the next request is served.
func TestDoorStdioOverLongLine(t *testing.T) {
	_, s := doorServer(t)
	for _, limit := range []int{1 << 10, 0} { // 0: the SDK's default, 16 MiB
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- s.Run(ctx, &mcp.IOTransport{Reader: inR, Writer: outW, MaxLineLength: limit})
		}()
		c := newRawLine(t, inW, outR)
		c.send(initialize)
		c.reply()
		size := 2 << 10
		if limit == 0 {
			size = 17 << 20
		}
		c.send(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"` + strings.Repeat("a", size) + `"}}`)
		answers := c.ping()
		if len(answers) != 1 || answers[0]["id"] != nil {
			t.Errorf("limit %d: answered %v", limit, answers)
		}
		select {
		case err := <-done:
			t.Fatalf("limit %d: the server stopped: %v", limit, err)
		default:
		}
		cancel()
		inW.Close()
		outR.Close()
	}
}

// The corpus through the official Go client over Streamable HTTP: a
// server with sessions, to a client of the 2025-11-25 revision (which opens
// one) and of 2026-07-28 (which opens none), and a stateless server. Each
// answers every call with keel's code, audited.
func TestDoorHTTP(t *testing.T) {
	t.Parallel()
	approvals, err := mcpserver.NewApprovals(grant.HMACKey(grantSecret), stateSecret)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []struct {
		name       string
		stateless  bool
		sessionful bool // the client speaks 2025-11-25 and opens a session
		approvals  *mcpserver.Approvals
	}{
		{"sessions/2025-11-25", false, true, nil},
		{"sessions/2026-07-28", false, false, nil},
		{"stateless", true, false, nil},
		{"sessions/2025-11-25 with approvals", false, true, approvals},
		{"stateless with approvals", true, false, approvals},
	} {
		t.Run(mode.name, func(t *testing.T) {
			stateless := !mode.sessionful
			f, s := doorServerWith(t, mode.approvals)
			h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Stateless: mode.stateless, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if mode.sessionful {
				h = noDiscover(h)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "door", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.ID() != ""; got != mode.sessionful {
				t.Fatalf("the client has a session: %v, want %v", got, mode.sessionful)
			}
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, tool := range list.Tools {
				listed = append(listed, tool.Name)
			}
			if err := doortest.CheckListed(listed); err != nil {
				t.Error(err)
			}
			sent := 0
			for i, tc := range doortest.Calls() {
				if !tc.JSONArguments() && !tc.NoArguments {
					continue // the client cannot send it: it marshals arguments as JSON
				}
				if stateless && strings.ContainsAny(tc.Tool, "\x00\n") {
					continue // the client's net/http refuses the name as its Mcp-Name header; TestDoorHTTPRaw sends it
				}
				callID := fmt.Sprintf("http-%d", i)
				p := &mcp.CallToolParams{Name: tc.Tool, Meta: mcp.Meta{mcpserver.MetaCallID: callID}}
				if !tc.NoArguments {
					p.Arguments = json.RawMessage(tc.Arguments)
				}
				res, err := cs.CallTool(ctx, p)
				code, text, aerr := clientAnswer(res, err)
				checkCall(t, f, tc, callID, code, text, aerr)
				sent++
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: doortest.Probe, Arguments: map[string]any{"incident_id": "INC-001"}}); err != nil {
				t.Fatal("a valid call after the corpus:", err)
			}
			t.Logf("http %s: %d calls", mode.name, sent)
		})
	}
}

// noDiscover answers server/discover as a server of the 2025-11-25
// revision does (-32601), so the Go client falls back to initialize and a
// session.
func noDiscover(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "server/discover" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found."}}`, msg.ID)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	})
}

// clientAnswer is the keel code and the client's text of what the Go
// client returned for a call.
func clientAnswer(res *mcp.CallToolResult, err error) (runtime.Code, string, error) {
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) && we.Code == jsonrpc.CodeInvalidParams && strings.HasPrefix(we.Message, "No tool with that name") {
			return runtime.CodeUnknownTool, we.Message, nil
		}
		return "", err.Error(), fmt.Errorf("a protocol error, not keel's answer: %v", err)
	}
	var texts []string // what the model reads; the SDK's own _meta aside
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	if !res.IsError {
		return "", strings.Join(texts, "\n"), nil
	}
	var kr runtime.ToolResult
	if len(texts) == 0 || json.Unmarshal([]byte(texts[0]), &kr) != nil || kr.Error == nil {
		return "", strings.Join(texts, "\n"), fmt.Errorf("an error result that is not keel's: %v", texts)
	}
	return kr.Error.Code, texts[0], nil
}

// Raw POSTs, with sessions and stateless: each malformed frame gets a 4xx
// and the server serves the next call; over 2026-07-28, names that no
// header carries (sent in SEP-2243's base64 form, as the spec asks) get
// keel's unknown_tool, audited.
func TestDoorHTTPRaw(t *testing.T) {
	const version = "2026-07-28"
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"keel/call_id":%q}`
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			f, s := doorServer(t)
			srv := serve(t, s, mcpserver.HTTPOptions{Stateless: stateless, Logger: slog.New(slog.DiscardHandler)})
			headers := map[string]string{}
			if !stateless {
				r := post(t, srv.URL, initialize, nil)
				headers["Mcp-Session-Id"] = r.header.Get("Mcp-Session-Id")
				headers["Mcp-Protocol-Version"] = "2025-06-18"
				post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers)
			}
			valid := func(when string) {
				t.Helper()
				body := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"}}}`
				h := headers
				if stateless {
					body = `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"},` + fmt.Sprintf(meta, "valid") + `}}`
					h = map[string]string{"Mcp-Protocol-Version": version, "Mcp-Method": "tools/call", "Mcp-Name": "lookup_incident"}
				}
				if r := post(t, srv.URL, body, h); r.status != 200 || !strings.Contains(r.body, `INC-001`) || strings.Contains(r.body, `"isError":true`) {
					t.Fatalf("a valid call %s: %d %s", when, r.status, r.body)
				}
			}
			valid("first")
			sessions := liveSessions(s)
			for _, fr := range doortest.Frames() {
				r := post(t, srv.URL, fr.Bytes, headers)
				refused := (r.status >= 400 && r.status < 500) || strings.Contains(r.body, `"error":{"code":-32`)
				// Before 2025-06-18 the protocol has batches, and a response
				// is answered by nothing.
				served := fr.Name == "batch" || fr.Name == "response to nothing"
				if r.status >= 500 || (!refused && !served) {
					t.Errorf("frame %s: %d %s", fr.Name, r.status, r.body)
				}
				if doortest.CheckAnswer(doortest.Case{Name: fr.Name}, "", r.body) != nil {
					t.Errorf("frame %s: the answer leaks: %s", fr.Name, r.body)
				}
				valid("after frame " + fr.Name)
			}
			if n := liveSessions(s); n != sessions {
				t.Errorf("%d sessions after the frames, %d before: a malformed frame left one open", n, sessions)
			}
			t.Logf("http raw stateless=%v: %d frames", stateless, len(doortest.Frames()))
			if !stateless {
				return
			}
			for i, name := range []string{"lookup_incident\n", "lookup_incident\x00", "lookup_incident ", "", "Lookup_Incident"} {
				callID := fmt.Sprintf("raw-%d", i)
				q, _ := jsontext.AppendQuote(nil, name)
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s,"arguments":{"incident_id":"INC-001"},`+meta+`}}`, i+1, q, callID)
				header := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(name)) + "?="
				if name == "Lookup_Incident" {
					header = name
				}
				r := post(t, srv.URL, body, map[string]string{"Mcp-Protocol-Version": version, "Mcp-Method": "tools/call", "Mcp-Name": header})
				if !strings.Contains(r.body, `"code":-32602`) || !strings.Contains(r.body, "No tool with that name") {
					t.Errorf("name %q: %d %s", name, r.status, r.body)
				}
				if !f.Audited(callID) {
					t.Errorf("name %q: not audited", name)
				}
			}
			// A name a header carries, sent under another header, is the
			// SDK's -32020 to refuse: the front does not weaken that check.
			body := `{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"},` + fmt.Sprintf(meta, "mismatch") + `}}`
			runs := f.Runs()
			if r := post(t, srv.URL, body, map[string]string{"Mcp-Protocol-Version": version, "Mcp-Method": "tools/call", "Mcp-Name": "admin_tool"}); r.status != 400 || f.Runs() != runs {
				t.Errorf("a mismatched Mcp-Name: %d %s", r.status, r.body)
			}
			if !f.Audited("mismatch") || f.Refused(runtime.RefusedHeaderMismatch) != 1 {
				t.Errorf("a mismatched Mcp-Name: no audit record of the refusal")
			}
		})
	}
}

// Past the SDK's page of 1,000 tools, tools/list is still what the caller
// may call, in one page: no cursor names a hidden tool, and a cursor the
// client makes up is refused.
func TestListPagesAfterFiltering(t *testing.T) {
	t.Parallel()
	var tools []*runtime.Tool
	for i := range 1500 {
		tools = append(tools, runtime.NewTool(runtime.ToolInfo{Name: fmt.Sprintf("tool_%04d", i), Version: "1", Effect: runtime.EffectRead, Description: "x",
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{}`)},
			runtime.Handle(func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil })))
	}
	hidden := func(name string) bool { return name[len(name)-1]%2 == 1 } // every odd one
	exec, err := runtime.NewExecutor(keeltest.Of(tools...), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithToolFilter(func(_ context.Context, _ runtime.ExecutionContext, t runtime.ToolInfo) bool { return !hidden(t.Name) }))
	if err != nil {
		t.Fatal(err)
	}
	s := mcpserver.New(exec, mcpserver.Options{})
	ctx := context.Background()
	for name, cs := range transports(t, s, "lister") {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 750 || res.NextCursor != "" {
			t.Errorf("%s: %d tools, next cursor %q", name, len(res.Tools), res.NextCursor)
		}
		for _, tool := range res.Tools {
			if hidden(tool.Name) {
				t.Errorf("%s: lists hidden %s", name, tool.Name)
			}
		}
		crafted := base64.StdEncoding.EncodeToString([]byte("tool_0999"))
		if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: crafted}); err == nil {
			t.Errorf("%s: a made-up cursor was answered", name)
		}
	}
}

// A stream of malformed frames leaves nothing behind on stdio: no
// goroutine per frame, and no frame's buffer (the server answers each, and
// a thousand of them end where one did).
func TestDoorStdioLeaksNothing(t *testing.T) {
	_, s := doorServer(t)
	c, _ := startStdio(t, s)
	frames := doortest.Frames()
	round := func() {
		for _, fr := range frames {
			c.send(fr.Bytes)
		}
		c.ping()
	}
	round()
	goruntime.GC()
	before := goruntime.NumGoroutine()
	for range 60 {
		round()
	}
	goruntime.GC()
	if after := goruntime.NumGoroutine(); after > before+2 {
		t.Fatalf("%d goroutines after %d malformed frames, %d before", after, 60*len(frames), before)
	}
}

// The corpus through the task door: every call of a client that declares
// the tasks extension, to a server whose every tool is a task tool, gets
// keel's answer (in the task's inlined result, or at once for a name the
// set lacks), audited; a hidden tool is never a task.
func TestDoorTasks(t *testing.T) {
	t.Parallel()
	f, err := doortest.New()
	if err != nil {
		t.Fatal(err)
	}
	s := mcpserver.New(f.Exec, mcpserver.Options{Tasks: &mcpserver.Tasks{Logger: slog.New(slog.DiscardHandler)},
		Context: func(context.Context, *mcp.CallToolRequest) runtime.ExecutionContext { return doortest.Caller() }})
	srv := serve(t, s, mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	tasks, sent := 0, 0
	for i, tc := range doortest.Calls() {
		if !tc.JSONArguments() && !tc.NoArguments {
			continue
		}
		callID := fmt.Sprintf("task-door-%d", i)
		name, _ := jsontext.AppendQuote(nil, tc.Tool)
		args := ""
		if !tc.NoArguments {
			args = `,"arguments":` + tc.Arguments
		}
		header := tc.Tool
		if strings.TrimSpace(header) != header || strings.ContainsFunc(header, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
			header = "=?base64?" + base64.StdEncoding.EncodeToString([]byte(tc.Tool)) + "?="
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"keel/call_id":%q}}}`, i+1, name, args, callID)
		raw := post(t, srv.URL, body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": header})
		var reply rpcReply
		if err := json.Unmarshal([]byte(raw.body), &reply); err != nil {
			t.Fatalf("%s: %d %q", tc.Name, raw.status, raw.body)
		}
		if id := reply.str("taskId"); id != "" {
			tasks++
			if tc.Tool == doortest.Hidden || tc.Tool == doortest.LeftOut {
				t.Errorf("%s, which the caller may not see, is a task", tc.Tool)
			}
			reply = awaitEnd(t, srv.URL, id)
			if e := reply.Result["error"]; e != nil {
				reply.Error = new(struct {
					Code    int64
					Message string
					Data    json.RawMessage
				})
				json.Unmarshal(e, reply.Error)
			}
		}
		var code runtime.Code
		var text string
		if reply.Error != nil {
			code, text, err = clientAnswer(nil, &jsonrpc.Error{Code: reply.Error.Code, Message: reply.Error.Message})
		} else {
			var res mcp.CallToolResult
			inner := reply.Result["result"]
			if inner == nil {
				b, _ := json.Marshal(reply.Result)
				inner = b
			}
			if err := json.Unmarshal(inner, &res); err != nil {
				t.Fatalf("%s: %s", tc.Name, inner)
			}
			code, text, err = clientAnswer(&res, nil)
		}
		checkCall(t, f, tc, callID, code, text, err)
		sent++
	}
	if tasks == 0 {
		t.Fatal("no call was a task")
	}
	t.Logf("http tasks: %d calls, %d of them as tasks", sent, tasks)
}

// awaitEnd polls a task with no caller header until it ends.
func awaitEnd(t *testing.T, url, id string) rpcReply {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		r := taskRPC(t, url, "", "tasks/get", `"taskId":"`+id+`"`, true)
		if st := r.str("status"); r.Error == nil && taskstore.Status(st).Terminal() {
			return r
		}
	}
	t.Fatalf("task %s did not end", id)
	return rpcReply{}
}
