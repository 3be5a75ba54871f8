package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/mcpserver/approvalstore"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/redisapprovals"
	"github.com/keelgen/keel/redisreplay"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pageServer is a stateless MCP server at /mcp whose calls no client is
// asked about wait at the approval page at /approvals/; the approver is
// named by the X-Approver header, and "lead" may decide every call.
func pageServer(t *testing.T, ran *atomic.Int32) *httptest.Server {
	return pageReplica(t, ran, memstore.NewReplayStore(), approvalstore.NewMemory(), true)
}

// pageReplica is pageServer on the stores a deployment's replicas share,
// with sessions unless stateless, and serving tasks when given them.
func pageReplica(t *testing.T, ran *atomic.Int32, replay runtime.ReplayStore, pending approvalstore.Store, stateless bool, tasks ...*mcpserver.Tasks) *httptest.Server {
	t.Helper()
	exec, err := runtime.NewExecutor(counted(t, ran), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithApprovals(grant.HMACKey(grantSecret), replay))
	if err != nil {
		t.Fatal(err)
	}
	approvals, err := mcpserver.NewApprovals(grant.HMACKey(grantSecret), stateSecret)
	if err != nil {
		t.Fatal(err)
	}
	var taskCfg *mcpserver.Tasks
	if len(tasks) > 0 {
		taskCfg = tasks[0]
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	approvals.Pending, approvals.PageURL = pending, srv.URL+"/approvals/"
	h, err := mcpserver.HTTPHandler(mcpserver.New(exec, mcpserver.Options{Approvals: approvals, Tasks: taskCfg}), mcpserver.HTTPOptions{Stateless: stateless, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	page, err := mcpserver.ApprovalPage(approvals, mcpserver.PageOptions{Logger: slog.New(slog.DiscardHandler), Approver: func(r *http.Request) (mcpserver.Approver, bool) {
		name := r.Header.Get("X-Approver")
		return mcpserver.Approver{Name: name, May: func(tenant, principal string) bool { return name == "lead" }}, name != ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/mcp", h)
	mux.Handle("/approvals/", page)
	return srv
}

// legacyCall is a create_ticket call of a 2025-11-25 client to a
// stateless server: it cannot be asked, so its answer is approval_required
// with the page's address, or the call's result.
func legacyCall(t *testing.T, base, args string) (text, approvalURL string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_ticket","arguments":` + args + `}}`
	r := post(t, base+"/mcp", body, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	var reply struct {
		Result struct {
			Content []struct{ Text string }
		}
	}
	if json.Unmarshal([]byte(r.body), &reply) != nil || len(reply.Result.Content) == 0 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	text = reply.Result.Content[0].Text
	var res runtime.ToolResult
	json.Unmarshal([]byte(text), &res)
	if res.Error != nil && res.Error.Approval != nil {
		approvalURL = res.Error.Approval.URL
	}
	return text, approvalURL
}

// page GETs or POSTs the approval page as approver.
func page(t *testing.T, method, address, approver string, form url.Values, origin string) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, address, body)
	if approver != "" {
		req.Header.Set("X-Approver", approver)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// pageTicket's summary, copied from a web page, reads "Amount: 1.00" when
// its bidi controls are rendered.
const pageTicket = `{"incident_id":"INC-042","summary":"Amount: \u202e00.001\u202c, refund it"}`

var tokenField = regexp.MustCompile(`name="token" value="([^"]+)"`)

// A client that cannot be asked (2025-11-25, stateless) gets
// approval_required with the page's address for its call; an approver
// reads the executor's question there and approves, once; the same call
// sent again runs once, and once more is approval_required again. A
// denial runs nothing. Strangers, other approvers, forged and cross-origin
// posts decide nothing.
func TestApprovalPage(t *testing.T) {
	var ran atomic.Int32
	srv := pageServer(t, &ran)
	text, address := legacyCall(t, srv.URL, pageTicket)
	if !strings.Contains(text, `"approval_required"`) || !strings.HasPrefix(address, srv.URL+"/approvals/") || strings.Contains(address, "INC-042") {
		t.Fatalf("not sent to the page: %s", text)
	}
	if _, again := legacyCall(t, srv.URL, pageTicket); again != address {
		t.Errorf("the same call sent twice waits twice: %s and %s", address, again)
	}
	if status, _ := page(t, "GET", address, "", nil, ""); status != http.StatusUnauthorized {
		t.Errorf("a stranger: %d", status)
	}
	if status, _ := page(t, "GET", address, "intern", nil, ""); status != http.StatusNotFound {
		t.Errorf("an approver who may not decide it: %d", status)
	}
	status, shown := page(t, "GET", address, "lead", nil, "")
	question := html.UnescapeString(regexp.MustCompile(`(?s)<pre id="question">(.*?)</pre>`).FindStringSubmatch(shown)[1])
	if status != http.StatusOK || !strings.Contains(question, `incident_id: "INC-042"`) || !strings.Contains(question, `\u202E`) || strings.ContainsAny(shown, "\u202e\u2028") {
		t.Fatalf("the page: %d\n%s", status, shown)
	}
	if status, list := page(t, "GET", srv.URL+"/approvals/", "lead", nil, ""); status != http.StatusOK || !strings.Contains(list, address[len(srv.URL):]) {
		t.Errorf("the list: %d %s", status, list)
	}
	token := tokenField.FindStringSubmatch(shown)[1]
	for name, c := range map[string]struct {
		form             url.Values
		approver, origin string
	}{
		"no token":        {url.Values{"decision": {"approve"}}, "lead", ""},
		"another's token": {url.Values{"decision": {"approve"}, "token": {token}}, "other-lead", ""},
		"cross-origin":    {url.Values{"decision": {"approve"}, "token": {token}}, "lead", "https://evil.example"},
	} {
		if status, _ := page(t, "POST", address, c.approver, c.form, c.origin); status != http.StatusForbidden && status != http.StatusNotFound {
			t.Errorf("%s: %d", name, status)
		}
	}
	if _, again := legacyCall(t, srv.URL, pageTicket); ran.Load() != 0 || again != address {
		t.Fatalf("before a decision: ran %d", ran.Load())
	}
	if status, done := page(t, "POST", address, "lead", url.Values{"decision": {"approve"}, "token": {token}}, srv.URL); status != http.StatusOK || !strings.Contains(done, "Approved by lead") {
		t.Fatalf("approving: %d %s", status, done)
	}
	if status, _ := page(t, "POST", address, "lead", url.Values{"decision": {"deny"}, "token": {token}}, srv.URL); status != http.StatusConflict {
		t.Errorf("a second decision: %d", status)
	}
	if text, _ := legacyCall(t, srv.URL, pageTicket); ran.Load() != 1 || strings.Contains(text, "approval_required") {
		t.Fatalf("the approved call sent again: ran %d; %s", ran.Load(), text)
	}
	if text, next := legacyCall(t, srv.URL, pageTicket); ran.Load() != 1 || !strings.Contains(text, "approval_required") || next == address || next == "" {
		t.Fatalf("sent once more: ran %d; %s", ran.Load(), text)
	}
	other := `{"incident_id":"INC-043","summary":"page the on-call"}`
	_, denied := legacyCall(t, srv.URL, other)
	_, shown = page(t, "GET", denied, "lead", nil, "")
	page(t, "POST", denied, "lead", url.Values{"decision": {"deny"}, "token": {tokenField.FindStringSubmatch(shown)[1]}}, "")
	if text, _ := legacyCall(t, srv.URL, other); ran.Load() != 1 || !strings.Contains(text, "approval_required") {
		t.Fatalf("a denied call sent again: ran %d; %s", ran.Load(), text)
	}
}

// Two replicas on one Redis (grants in redisreplay, approvals in
// redisapprovals): a call sent to A waits at A's address; an approver
// decides it on B's page; the call sent again to A runs once, and sent once
// more to B it waits again.
func TestApprovalPageAcrossReplicas(t *testing.T) {
	rdb := redistest.Start(t)
	replay, err := redisreplay.New(rdb.Client(), redisreplay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pending, err := redisapprovals.New(rdb.Client(), redisapprovals.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ran atomic.Int32
	a, b := pageReplica(t, &ran, replay, pending, true), pageReplica(t, &ran, replay, pending, true)
	_, address := legacyCall(t, a.URL, pageTicket)
	id := strings.TrimPrefix(address, a.URL+"/approvals/")
	if _, again := legacyCall(t, b.URL, pageTicket); again != b.URL+"/approvals/"+id {
		t.Fatalf("the call sent to B waits anew: %s, not %s", again, id)
	}
	_, shown := page(t, "GET", b.URL+"/approvals/"+id, "lead", nil, "")
	if m := tokenField.FindStringSubmatch(shown); m == nil || !strings.Contains(shown, "INC-042") {
		t.Fatalf("B's page: %s", shown)
	} else if status, _ := page(t, "POST", b.URL+"/approvals/"+id, "lead", url.Values{"decision": {"approve"}, "token": {m[1]}}, b.URL); status != http.StatusOK {
		t.Fatalf("approving on B: %d", status)
	}
	if text, _ := legacyCall(t, a.URL, pageTicket); ran.Load() != 1 || strings.Contains(text, "approval_required") {
		t.Fatalf("sent again to A: ran %d; %s", ran.Load(), text)
	}
	if text, _ := legacyCall(t, b.URL, pageTicket); ran.Load() != 1 || !strings.Contains(text, "approval_required") {
		t.Fatalf("sent once more to B: ran %d; %s", ran.Load(), text)
	}
}

// A 2025-11-25 client in a session that takes URL-mode elicitation (and no
// form, so keel cannot ask it) is sent to the page by the protocol's own
// error, -32042, which its application shows its person: one URL-mode
// elicitation whose id is the approval's and whose message is the
// executor's question. Approved there, the call sent again runs once;
// once more, it is sent to a new address. A 2026-07-28 client, whose
// revision has no such error, reads the address in the result.
func TestURLModeClientsAreSentToThePage(t *testing.T) {
	var ran atomic.Int32
	srv := pageReplica(t, &ran, memstore.NewReplayStore(), approvalstore.NewMemory(), false)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "url-client", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("keel sent a form to a client that takes URLs only")
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	var args map[string]any
	json.Unmarshal([]byte(pageTicket), &args)
	sentTo := func() urlElicitation {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_ticket", Arguments: args})
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) || wire.Code != mcp.CodeURLElicitationRequired {
			t.Fatalf("want -32042, got %v %+v", err, res)
		}
		var data struct{ Elicitations []urlElicitation }
		if json.Unmarshal(wire.Data, &data) != nil || len(data.Elicitations) != 1 {
			t.Fatalf("the error's data: %s", wire.Data)
		}
		return data.Elicitations[0]
	}
	e := sentTo()
	if e.Mode != "url" || e.URL != srv.URL+"/approvals/"+e.ElicitationID || len(e.ElicitationID) != 32 ||
		!strings.Contains(e.Message, `incident_id: "INC-042"`) || !strings.Contains(e.Message, `\u202E`) || strings.ContainsAny(e.Message, "\u202e\u202c") {
		t.Fatalf("the elicitation: %+v", e)
	}
	status, shown := page(t, "GET", e.URL, "lead", nil, "")
	if question := html.UnescapeString(regexp.MustCompile(`(?s)<pre id="question">(.*?)</pre>`).FindStringSubmatch(shown)[1]); status != http.StatusOK || question != e.Message {
		t.Fatalf("the page shows another question than the elicitation: %d\n%s\n%s", status, question, e.Message)
	}
	if status, _ := page(t, "POST", e.URL, "lead", url.Values{"decision": {"approve"}, "token": {tokenField.FindStringSubmatch(shown)[1]}}, srv.URL); status != http.StatusOK || ran.Load() != 0 {
		t.Fatalf("approving: %d, ran %d", status, ran.Load())
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_ticket", Arguments: args}); err != nil || ran.Load() != 1 { // counted's handler fails, once it ran
		t.Fatalf("approved, sent again: ran %d, %v %+v", ran.Load(), err, res)
	}
	if next := sentTo(); next.ElicitationID == e.ElicitationID || ran.Load() != 1 {
		t.Fatalf("sent once more: ran %d, %+v", ran.Load(), next)
	}

	params := `{` + strings.Replace(meta2026("2026-07-28"), `clientCapabilities":{}`, `clientCapabilities":{"elicitation":{"url":{}}}`, 1) +
		`,"name":"create_ticket","arguments":` + pageTicket + `}`
	r := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`,
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "create_ticket"})
	if strings.Contains(r.body, "-32042") || !strings.Contains(r.body, `approval_required`) || !strings.Contains(r.body, srv.URL+"/approvals/") {
		t.Fatalf("a 2026-07-28 client that takes URLs: %d %s", r.status, r.body)
	}
}

// urlElicitation is one elicitation of a -32042 error's data.
type urlElicitation struct {
	Mode, ElicitationID, URL, Message string
}

// A task whose client declares the tasks extension and no elicitation
// cannot be asked either: the task ends approval_required with the page's
// address; approved there, the same call sent as a new task runs once.
func TestATaskWaitsAtThePage(t *testing.T) {
	var ran atomic.Int32
	srv := pageReplica(t, &ran, memstore.NewReplayStore(), approvalstore.NewMemory(), true,
		&mcpserver.Tasks{PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	asTask := func(method, params string) rpcReply {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}},` + params + `}}`
		raw := post(t, srv.URL+"/mcp", body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": "create_ticket"})
		var r rpcReply
		if json.Unmarshal([]byte(raw.body), &r) != nil {
			t.Fatalf("%d %s", raw.status, raw.body)
		}
		return r
	}
	ended := func(id string) json.RawMessage {
		t.Helper()
		var r rpcReply
		waitFor(t, "the task to end", func() bool {
			body := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
				`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}},"taskId":"` + id + `"}}`
			raw := post(t, srv.URL+"/mcp", body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tasks/get", "Mcp-Name": id})
			json.Unmarshal([]byte(raw.body), &r)
			return r.str("status") == "completed"
		})
		return r.Result["result"]
	}
	id := asTask("tools/call", `"name":"create_ticket","arguments":`+pageTicket).str("taskId")
	if id == "" {
		t.Fatal("no task")
	}
	first := ended(id)
	address := regexp.MustCompile(`https?://[^"\\]+/approvals/[0-9a-f]+`).FindString(string(first))
	if !strings.Contains(string(first), "approval_required") || address == "" || ran.Load() != 0 {
		t.Fatalf("the task's result: %s", first)
	}
	status, shown := page(t, "GET", address, "lead", nil, "")
	if status != http.StatusOK {
		t.Fatalf("the page: %d", status)
	}
	page(t, "POST", address, "lead", url.Values{"decision": {"approve"}, "token": {tokenField.FindStringSubmatch(shown)[1]}}, srv.URL)
	again := ended(asTask("tools/call", `"name":"create_ticket","arguments":`+pageTicket).str("taskId"))
	if ran.Load() != 1 || strings.Contains(string(again), "approval_required") {
		t.Fatalf("approved, sent again as a task: ran %d; %s", ran.Load(), again)
	}
}

// One tenant's callers, however many calls they leave waiting, hide no
// other tenant's calls from that tenant's approvers: the list reads each
// of the approver's tenants from the store's index of it.
func TestOneTenantsFloodHidesNoOtherTenantsCalls(t *testing.T) {
	approvals, err := mcpserver.NewApprovals(grant.HMACKey(grantSecret), stateSecret)
	if err != nil {
		t.Fatal(err)
	}
	store := approvalstore.NewMemory()
	approvals.Pending, approvals.PageURL = store, "http://127.0.0.1/approvals/"
	h, err := mcpserver.ApprovalPage(approvals, mcpserver.PageOptions{Logger: slog.New(slog.DiscardHandler), Approver: func(r *http.Request) (mcpserver.Approver, bool) {
		tenant := r.Header.Get("X-Approver")
		return mcpserver.Approver{Name: tenant + "-lead", Tenants: []string{tenant}, May: func(t, _ string) bool { return t == tenant }}, tenant != ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, start := context.Background(), time.Now()
	add := func(id, tenant, principal string, at time.Duration) {
		_, err := store.Pending(ctx, approvalstore.Approval{ID: id, Key: id, Tenant: tenant, Principal: principal,
			Created: start.Add(at), Expires: start.Add(time.Hour), Request: runtime.ApprovalRequest{Tool: "create_ticket", Question: "Approve?"}})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, who := range []string{"mallory", "trudy"} {
		for i := range approvalstore.MaxPerCaller {
			add(who+strconv.Itoa(i), "acme", who, time.Duration(i)*time.Millisecond)
		}
	}
	add("globexcall", "globex", "bob", time.Second)
	for approver, want := range map[string]int{"globex": 1, "acme": 100} {
		req := httptest.NewRequest(http.MethodGet, "/approvals/", nil)
		req.Header.Set("X-Approver", approver)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got := strings.Count(rec.Body.String(), `href="/approvals/`); rec.Code != http.StatusOK || got != want {
			t.Errorf("%s's approver lists %d calls (status %d), want %d", approver, got, rec.Code, want)
		}
		if approver == "globex" && !strings.Contains(rec.Body.String(), "/approvals/globexcall") {
			t.Errorf("globex's call is not listed:\n%s", rec.Body.String())
		}
	}
}

// A question too long for a client's message is its brief there, which
// says it is cut and gives the page's address, where the whole call reads
// line by line, every line of it.
func TestACutQuestionGivesThePageWhereTheCallIsWhole(t *testing.T) {
	var ran atomic.Int32
	srv := pageReplica(t, &ran, memstore.NewReplayStore(), approvalstore.NewMemory(), false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var asked []string
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "approver", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &mcp.ElicitResult{Action: "decline"}, nil
		}}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	summary := strings.Repeat("a line of the patch\n", 200) + "the last line \u202e"
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_ticket", Arguments: map[string]any{"incident_id": "INC-001", "summary": summary}}); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "Some values are too long to show here") || strings.Contains(asked[0], "the last line") {
		t.Fatalf("the client's person read %q", asked)
	}
	address := asked[0][strings.LastIndex(asked[0], " ")+1:]
	if !strings.HasPrefix(address, srv.URL+"/approvals/") {
		t.Fatalf("no page address in %q", asked[0][max(0, len(asked[0])-200):])
	}
	status, body := page(t, http.MethodGet, address, "lead", nil, "")
	body = html.UnescapeString(body)
	if status != http.StatusOK || strings.Count(body, "| a line of the patch") != 200 || !strings.Contains(body, `| the last line \u202E`) {
		t.Errorf("the page (%d) does not show the whole call:\n%.2000s", status, body)
	}
	if ran.Load() != 0 {
		t.Error("a declined call ran")
	}
}
