package mcpserver_test

import (
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/mcpserver/approvalstore"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/redisapprovals"
	"github.com/keelgen/keel/redisreplay"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

// pageServer is a stateless MCP server at /mcp whose calls no client is
// asked about wait at the approval page at /approvals/; the approver is
// named by the X-Approver header, and "lead" may decide every call.
func pageServer(t *testing.T, ran *atomic.Int32) *httptest.Server {
	return pageReplica(t, ran, memstore.NewReplayStore(), approvalstore.NewMemory())
}

// pageReplica is pageServer on the stores a deployment's replicas share.
func pageReplica(t *testing.T, ran *atomic.Int32, replay runtime.ReplayStore, pending approvalstore.Store) *httptest.Server {
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
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	approvals.Pending, approvals.PageURL = pending, srv.URL+"/approvals/"
	h, err := mcpserver.HTTPHandler(mcpserver.New(exec, mcpserver.Options{Approvals: approvals}), mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
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
	a, b := pageReplica(t, &ran, replay, pending), pageReplica(t, &ran, replay, pending)
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
