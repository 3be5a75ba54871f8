package browsertest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/mcpserver/approvalstore"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

var (
	grantKey    = grant.HMACKey([]byte("0123456789abcdef0123456789abcdef-grants"))
	stateSecret = []byte("0123456789abcdef0123456789abcdef-states")
)

// ticket's summary, copied from a web page, reads "Amount: 1.00, refund
// it" when its bidi controls are rendered.
const ticket = `{"incident_id":"INC-001","summary":"Amount: \u202e00.001\u202c, refund it"}`

// tickets counts the create_ticket calls that ran.
type tickets struct{ ran atomic.Int32 }

func (t *tickets) Begin(ctx context.Context, _ runtime.ToolCall) context.Context { return ctx }
func (t *tickets) End(_ context.Context, r *runtime.CallRecord) {
	if r.Tool == generated.ToolCreateTicket && r.OK {
		t.ran.Add(1)
	}
}

// server is keel's example tools over MCP (stateless, or with sessions) at /mcp, and the
// approval page at /approvals/, whose approver is named by the X-Approver
// header the browser sends.
func server(t *testing.T, ran *tickets, stateless bool) (*httptest.Server, *runtime.Executor) {
	t.Helper()
	exec, err := generated.NewExecutor(runtime.WithApprovals(grantKey, memstore.NewReplayStore()), runtime.WithObserver(ran),
		runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	approvals, err := mcpserver.NewApprovals(grantKey, stateSecret)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	approvals.Pending, approvals.PageURL = approvalstore.NewMemory(), srv.URL+"/approvals/"
	h, err := mcpserver.HTTPHandler(mcpserver.New(exec, mcpserver.Options{Approvals: approvals}), mcpserver.HTTPOptions{Stateless: stateless, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	page, err := mcpserver.ApprovalPage(approvals, mcpserver.PageOptions{Logger: slog.New(slog.DiscardHandler), Approver: func(r *http.Request) (mcpserver.Approver, bool) {
		name := r.Header.Get("X-Approver")
		return mcpserver.Approver{Name: name, May: func(string, string) bool { return name == "lead" }}, name != ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/mcp", h)
	mux.Handle("/approvals/", page)
	return srv, exec
}

// call is create_ticket from a 2025-11-25 client to the stateless server,
// which cannot ask it: its result, and the approval page's address when it
// is approval_required.
func call(t *testing.T, base string) (runtime.ToolResult, string) {
	return callWith(t, base, ticket)
}

// callWith is call with other arguments.
func callWith(t *testing.T, base, args string) (runtime.ToolResult, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_ticket","arguments":` + args + `}}`
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var reply struct {
		Result struct {
			Content []struct{ Text string }
			IsError bool
		}
	}
	if json.Unmarshal(raw, &reply) != nil || len(reply.Result.Content) == 0 {
		t.Fatalf("%d %s", res.StatusCode, raw)
	}
	if !reply.Result.IsError { // a result's text is its data
		return runtime.ToolResult{OK: true, Data: json.RawMessage(reply.Result.Content[0].Text)}, ""
	}
	var r runtime.ToolResult
	if err := json.Unmarshal([]byte(reply.Result.Content[0].Text), &r); err != nil {
		t.Fatal(err)
	}
	if r.Error != nil && r.Error.Approval != nil {
		return r, r.Error.Approval.URL
	}
	return r, ""
}

// browser starts headless chromium, as this machine needs it: no sandbox
// (CI runs as root), and none of the background connections a closed
// network refuses.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("no chromium on PATH: install Debian's chromium (apt-get install chromium); .ci/run does")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.UserDataDir(t.TempDir()))
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// openQuestion opens the page at address in headless chromium as the
// approver lead, and reads the question it shows.
func openQuestion(t *testing.T, address string) (context.Context, string) {
	t.Helper()
	ctx := browser(t)
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"X-Approver": "lead"}}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(address)); err != nil {
		t.Fatal(err)
	}
	question, err := chromedp.Run(ctx, chromedp.Text("#question"))
	if err != nil {
		t.Fatal(err)
	}
	return ctx, question
}

// A person approves, in a real browser, a call whose client could not be
// asked: the page shows the executor's question as text, its bidi controls
// escaped visibly, never rendered; a click on Approve decides it; the
// call, sent again, runs once; sent once more, it waits again.
func TestApprovalPageInABrowser(t *testing.T) {
	var ran tickets
	srv, exec := server(t, &ran, true)
	first, address := call(t, srv.URL)
	if first.Code() != runtime.CodeApprovalRequired || address == "" {
		t.Fatalf("not sent to the page: %+v", first.Error)
	}
	want := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "q", Name: generated.ToolCreateTicket, Arguments: json.RawMessage(ticket)})
	ctx, question := openQuestion(t, address)
	if strings.TrimSpace(question) != strings.TrimSpace(want.Error.Approval.Question) {
		t.Errorf("the page shows\n%q\nthe executor's question is\n%q", question, want.Error.Approval.Question)
	}
	if !strings.Contains(question, `Amount: \u202E00.001\u202C, refund it`) || strings.ContainsAny(question, "\u202e\u202c") {
		t.Errorf("the bidi controls are rendered, not shown:\n%s", question)
	}
	if ran.ran.Load() != 0 {
		t.Fatal("the write ran before anyone approved it")
	}
	if err := chromedp.Do(ctx, chromedp.Click("#approve"), chromedp.WaitVisible("#decision")); err != nil {
		t.Fatal(err)
	}
	decision, err := chromedp.Run(ctx, chromedp.Text("#decision"))
	if err != nil || decision != "Approved by lead." {
		t.Fatalf("after the click: %q %v", decision, err)
	}
	if r, _ := call(t, srv.URL); !r.OK || ran.ran.Load() != 1 {
		t.Fatalf("the approved call sent again: ran %d, %+v", ran.ran.Load(), r.Error)
	}
	if r, next := call(t, srv.URL); r.Code() != runtime.CodeApprovalRequired || ran.ran.Load() != 1 || next == address {
		t.Fatalf("sent once more: ran %d, %+v", ran.ran.Load(), r.Error)
	}
}

// A person reads the whole call on the page, however long: a 64 KiB patch
// whose last line holds a right-to-left override is shown line by line,
// every line of it, the override escaped visibly, in a block that scrolls;
// the question a client would be shown is cut, says so, and gives the
// page's address.
func TestTheWholeCallOnThePage(t *testing.T) {
	var ran tickets
	srv, exec := server(t, &ran, true)
	var patch strings.Builder
	for i := 0; patch.Len() < 64<<10; i++ {
		fmt.Fprintf(&patch, "+line %05d of the patch\n", i)
	}
	patch.WriteString("+return amount // \u202e00.001")
	args, _ := json.Marshal(map[string]string{"incident_id": "INC-001", "summary": patch.String()})
	first, address := callWith(t, srv.URL, string(args))
	if first.Code() != runtime.CodeApprovalRequired || address == "" {
		t.Fatalf("not sent to the page: %+v", first.Error)
	}
	want := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "q", Name: generated.ToolCreateTicket, Arguments: args})
	brief := want.Error.Approval.Brief
	if brief == want.Error.Approval.Question || !strings.Contains(brief, "Some values are too long to show here") || len(brief) > 8<<10 {
		t.Errorf("the brief (%d bytes) does not say it is cut:\n%.600s", len(brief), brief)
	}
	ctx, question := openQuestion(t, address)
	scrolls, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const q = document.querySelector("#question"); return q.scrollHeight > q.clientHeight && getComputedStyle(q).overflowY === "auto"; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(question) != strings.TrimSpace(want.Error.Approval.Question) {
		t.Errorf("the page shows %d bytes; the executor's question is %d", len(question), len(want.Error.Approval.Question))
	}
	lines := strings.Count(patch.String(), "\n") + 1
	if !strings.Contains(question, fmt.Sprintf("summary: text of %d lines", lines)) || strings.Count(question, "\n    | +line ") != lines-1 {
		t.Errorf("the page does not show the patch's %d lines", lines)
	}
	if !strings.Contains(question, `| +return amount // \u202E00.001`) || strings.Contains(question, "\u202e") {
		t.Errorf("the last line's override is not shown escaped: %q", question[max(0, len(question)-300):])
	}
	if !scrolls {
		t.Error("the question is not a block that scrolls")
	}
	if ran.ran.Load() != 0 {
		t.Fatal("the write ran before anyone approved it")
	}
}

// The official TypeScript client (1.32.2, a 2025-11-25 client), which keel
// cannot ask: on a stateless server (it declares form elicitation) its
// call is approval_required with the page's address; in a session where it
// declares only URL-mode elicitation, the call is the protocol's -32042,
// whose elicitation holds the address and the executor's question. A
// person approves in the browser; the client's call sent again runs once,
// and once more is refused (it waits again, at a new address).
func TestTypeScriptClientApprovedInABrowser(t *testing.T) {
	client := filepath.Join("..", "mcpserver", "testdata", "ts-client")
	if _, err := os.Stat(filepath.Join(client, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the TypeScript client is not installed: run npm ci in %s (.ci/run does)", client)
	}
	for _, c := range []struct {
		name, mode, code string
		stateless        bool
	}{
		{"stateless, form", "form", "approval_required", true},
		{"session, URL mode", "url", "url_elicitation", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ran tickets
			srv, exec := server(t, &ran, c.stateless)
			node := startClient(t, client, srv.URL+"/mcp", c.mode)
			code, rest, _ := strings.Cut(node.result(), " ")
			address, message, _ := strings.Cut(rest, " ")
			if code != c.code || !strings.HasPrefix(address, srv.URL+"/approvals/") {
				t.Fatalf("the client read %s %s", code, rest)
			}
			if c.mode == "url" {
				want := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "q", Name: generated.ToolCreateTicket, Arguments: json.RawMessage(ticket)})
				var shown string
				if json.Unmarshal([]byte(message), &shown) != nil || shown != want.Error.Approval.Question {
					t.Errorf("the client's person reads\n%s\nthe executor's question is\n%q", message, want.Error.Approval.Question)
				}
			}
			ctx := browser(t)
			if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"X-Approver": "lead"}}); err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(ctx, chromedp.Navigate(address), chromedp.Click("#approve"), chromedp.WaitVisible("#decision")); err != nil {
				t.Fatal(err)
			}
			node.again()
			if got := node.result(); got != "ok" || ran.ran.Load() != 1 {
				t.Fatalf("approved, sent again: %s, ran %d", got, ran.ran.Load())
			}
			node.again()
			if code, rest, _ := strings.Cut(node.result(), " "); code != c.code || strings.HasPrefix(rest, address) || ran.ran.Load() != 1 {
				t.Fatalf("sent once more: %s %s, ran %d", code, rest, ran.ran.Load())
			}
		})
	}
}

// tsClient is approval.mjs running: each result line it prints, and a
// way to make it call again.
type tsClient struct {
	t     *testing.T
	in    io.WriteCloser
	lines *bufio.Scanner
}

// startClient starts approval.mjs against mcpURL in mode ("form" or "url").
func startClient(t *testing.T, dir, mcpURL, mode string) *tsClient {
	t.Helper()
	node := exec.Command("node", "approval.mjs", mcpURL, mode)
	node.Dir, node.Stderr = dir, os.Stderr
	in, err := node.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := node.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); node.Wait() })
	return &tsClient{t: t, in: in, lines: bufio.NewScanner(out)}
}

// result is what the client printed for its latest call.
func (c *tsClient) result() string {
	c.t.Helper()
	for c.lines.Scan() {
		if line, ok := strings.CutPrefix(c.lines.Text(), "RESULT "); ok {
			return line
		}
		if c.lines.Text() == "ASKED" {
			c.t.Error("keel asked a client it cannot hear back from")
		}
	}
	c.t.Fatalf("the client ended: %v", c.lines.Err())
	return ""
}

func (c *tsClient) again() { io.WriteString(c.in, "again\n") }
