package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
	"github.com/keelgen/keel/runtime/report"
)

const (
	initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	lookupCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"}}}`
)

// counted is the example's tool set, counting handler runs.
func counted(t *testing.T, ran *atomic.Int32) runtime.ToolSet {
	t.Helper()
	var tools []*runtime.Tool
	for _, tool := range generated.ToolSet().Tools() {
		info := tool.Info()
		tools = append(tools, runtime.NewTool(info, runtime.Handle(func(context.Context, struct {
			IncidentID string `json:"incident_id"`
			Summary    string `json:"summary,omitempty"`
		}) (map[string]any, error) {
			ran.Add(1)
			return nil, errors.New("counted only")
		})))
	}
	return keeltest.Of(tools...)
}

type rawReply struct {
	status int
	header http.Header
	body   string
}

func post(t *testing.T, url, body string, headers map[string]string) rawReply {
	t.Helper()
	resp := send(t, context.Background(), url, body, headers)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawReply{resp.StatusCode, resp.Header, string(b)}
}

// send posts body as post does and returns the response unread.
func send(t *testing.T, ctx context.Context, url, body string, headers map[string]string) *http.Response {
	t.Helper()
	resp, err := sendQuiet(ctx, url, body, headers)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// sendQuiet posts body as send does and returns the error, for a request
// the test may give up on.
func sendQuiet(ctx context.Context, url, body string, headers map[string]string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	return http.DefaultClient.Do(req)
}

func serve(t *testing.T, s *mcpserver.Server, opts mcpserver.HTTPOptions) *httptest.Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h, err := mcpserver.HTTPHandler(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func liveSessions(s *mcpserver.Server) int {
	n := 0
	for range s.SDK().Sessions() {
		n++
	}
	return n
}

// A request from another origin, or with a foreign Host on loopback, is
// refused before it can open a session or run a tool.
func TestCrossOriginRequestsAreRefused(t *testing.T) {
	var ran atomic.Int32
	set := counted(t, &ran)
	for _, stateless := range []bool{false, true} {
		s := mcpserver.New(quietExecutor(t, set), mcpserver.Options{})
		srv := serve(t, s, mcpserver.HTTPOptions{Stateless: stateless, TrustedOrigins: []string{"https://console.example.com"}})
		for name, h := range map[string]map[string]string{
			"foreign Origin":          {"Origin": "http://evil.example"},
			"null Origin":             {"Origin": "null"},
			"cross-site fetch":        {"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"},
			"cross-site, no Origin":   {"Sec-Fetch-Site": "cross-site"},
			"DNS rebinding (Host)":    {"Host": "evil.example"},
			"foreign Origin and Host": {"Host": "evil.example", "Origin": "http://evil.example"},
		} {
			for _, body := range []string{initialize, lookupCall} {
				r := post(t, srv.URL, body, h)
				if r.status != http.StatusForbidden {
					t.Errorf("stateless=%v %s: status %d, want 403\n%s", stateless, name, r.status, r.body)
				}
				if strings.Contains(r.body, "evil") || r.header.Get("Mcp-Session-Id") != "" {
					t.Errorf("stateless=%v %s: refusal echoes input or opens a session: %q", stateless, name, r.body)
				}
			}
		}
		// A GET with a foreign Origin is refused too.
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Origin", "http://evil.example")
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("stateless=%v GET with a foreign Origin: %v %v", stateless, err, resp.Status)
		}
		if n := liveSessions(s); n != 0 || ran.Load() != 0 {
			t.Fatalf("stateless=%v: %d sessions opened, %d handler runs", stateless, n, ran.Load())
		}
		// The server's own origin and a trusted one pass.
		for _, origin := range []string{srv.URL, "https://console.example.com"} {
			if r := post(t, srv.URL, initialize, map[string]string{"Origin": origin}); r.status != http.StatusOK {
				t.Errorf("stateless=%v Origin %s: status %d\n%s", stateless, origin, r.status, r.body)
			}
		}
	}
}

// Past the cap a new session is 503; idle sessions close after the
// timeout, and a closed session's place is free again. The cap is checked
// on a server whose sessions outlive any machine's delay, the expiry on
// one whose sessions are watched until they go (its deadline a bound on a
// hang, not a measure).
func TestSessionsExpireAndAreCapped(t *testing.T) {
	t.Parallel()
	capped := exampleServer(t)
	srv := serve(t, capped, mcpserver.HTTPOptions{SessionTimeout: time.Hour, MaxSessions: 2})
	for range 2 {
		if r := post(t, srv.URL, initialize, nil); r.status != http.StatusOK || r.header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize: %d %q", r.status, r.body)
		}
	}
	if r := post(t, srv.URL, initialize, nil); r.status != http.StatusServiceUnavailable || r.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("a session past the cap: %d %q", r.status, r.body)
	}
	if n := liveSessions(capped); n != 2 {
		t.Fatalf("%d live sessions, want 2", n)
	}

	expiring := exampleServer(t)
	srv = serve(t, expiring, mcpserver.HTTPOptions{SessionTimeout: 100 * time.Millisecond, MaxSessions: 1})
	r := post(t, srv.URL, initialize, nil)
	id := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %q", r.status, r.body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for liveSessions(expiring) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := liveSessions(expiring); n != 0 {
		t.Fatalf("%d sessions outlived the idle timeout", n)
	}
	r = post(t, srv.URL, lookupCall, map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"})
	if r.status != http.StatusNotFound {
		t.Fatalf("an expired session still answered: %d %q", r.status, r.body)
	}
	if r := post(t, srv.URL, initialize, nil); r.status != http.StatusOK {
		t.Fatalf("a new session in the expired one's place (the cap is 1): %d", r.status)
	}
}

// An initialize the SDK fails (its params unreadable) holds no slot, though
// the SDK names a session in its answer: five of them, then a good one,
// under a cap of 2.
func TestFailedInitializesHoldNoSlot(t *testing.T) {
	t.Parallel()
	srv := serve(t, exampleServer(t), mcpserver.HTTPOptions{SessionTimeout: time.Hour, MaxSessions: 2})
	for range 5 {
		if r := post(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`, nil); !strings.Contains(r.body, `"error"`) {
			t.Fatalf("a bad initialize: %d %s", r.status, r.body)
		}
	}
	if r := post(t, srv.URL, initialize, nil); r.status != http.StatusOK || r.header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("a good initialize after bad ones: %d %s", r.status, r.body)
	}
}

// A session its client deletes frees its slot at once; one past its
// lifetime is closed by its own clock, busy or not, and frees its slot.
func TestDeletedAndOldSessionsFreeTheirSlots(t *testing.T) {
	t.Parallel()
	s := exampleServer(t)
	srv := serve(t, s, mcpserver.HTTPOptions{SessionTimeout: time.Hour, MaxSessions: 1})
	id := post(t, srv.URL, initialize, nil).header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("no session")
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL, nil)
	req.Header.Set("Mcp-Session-Id", "not-"+id) // an unknown id deletes nothing
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode/100 == 2 {
		t.Fatalf("DELETE of an unknown session: %v %v", resp, err)
	}
	if r := post(t, srv.URL, initialize, nil); r.status != http.StatusServiceUnavailable {
		t.Fatalf("a second session past the cap of 1: %d", r.status)
	}
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	if r := post(t, srv.URL, initialize, nil); r.status != http.StatusOK {
		t.Fatalf("a session in the deleted one's place: %d", r.status)
	}

	old := exampleServer(t)
	srv = serve(t, old, mcpserver.HTTPOptions{SessionTimeout: time.Hour, MaxSessionLifetime: 100 * time.Millisecond, MaxSessions: 1})
	if r := post(t, srv.URL, initialize, nil); r.status != http.StatusOK {
		t.Fatalf("initialize: %d", r.status)
	}
	deadline := time.Now().Add(30 * time.Second) // a bound on a hang, not a timing
	for liveSessions(old) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := liveSessions(old); n != 0 {
		t.Fatalf("%d sessions outlived their lifetime", n)
	}
	if r := post(t, srv.URL, initialize, nil); r.status != http.StatusOK {
		t.Fatalf("a session in the old one's place: %d", r.status)
	}
}

// Stateless: a call needs no session, and none is kept.
func TestStatelessServesEveryRequestAlone(t *testing.T) {
	s := exampleServer(t)
	srv := serve(t, s, mcpserver.HTTPOptions{Stateless: true})
	r := post(t, srv.URL, lookupCall, map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
	if r.status != http.StatusOK || !strings.Contains(r.body, `"INC-001"`) || r.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("stateless call: %d %v %q", r.status, r.header, r.body)
	}
	if n := liveSessions(s); n != 0 {
		t.Fatalf("%d sessions kept in stateless mode", n)
	}
}

// With a Verifier, a request without a valid bearer token gets 401 with
// WWW-Authenticate and runs nothing; the ExecutionContext comes from the
// verified token, never from a header the client sets.
func TestBearerTokenRequired(t *testing.T) {
	var ran atomic.Int32
	var seen atomic.Value
	set := counted(t, &ran)
	exec := quietExecutor(t, set)
	s := mcpserver.New(exec, mcpserver.Options{Context: mcpserver.TokenContext(func(_ context.Context, tok *auth.TokenInfo) runtime.ExecutionContext {
		ec := runtime.ExecutionContext{Principal: tok.UserID, Tenant: tok.Extra["tenant"].(string)}
		seen.Store(ec)
		return ec
	})})
	verifier := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token != "alice-secret-token" {
			return nil, errors.New("lookup failed at /srv/tokens.db")
		}
		return &auth.TokenInfo{UserID: "alice", Expiration: time.Now().Add(time.Hour), Extra: map[string]any{"tenant": "acme"}}, nil
	}
	srv := serve(t, s, mcpserver.HTTPOptions{Stateless: true, Verifier: verifier})
	for name, h := range map[string]map[string]string{
		"no token":         {"X-Principal": "admin"},
		"wrong token":      {"Authorization": "Bearer guess"},
		"not bearer":       {"Authorization": "Basic YWxpY2U6eA=="},
		"token in a query": {"X-Token": "alice-secret-token"},
	} {
		r := post(t, srv.URL, lookupCall, h)
		if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: %d %v", name, r.status, r.header)
		}
		if strings.Contains(r.body, "/srv") || strings.Contains(r.body, "lookup failed") {
			t.Errorf("%s: the refusal leaks the verifier's error: %q", name, r.body)
		}
	}
	if ran.Load() != 0 {
		t.Fatalf("%d handler runs without a valid token", ran.Load())
	}
	r := post(t, srv.URL, lookupCall, map[string]string{"Authorization": "Bearer alice-secret-token", "X-Principal": "admin", "Mcp-Protocol-Version": "2025-06-18"})
	if r.status != http.StatusOK || ran.Load() != 1 {
		t.Fatalf("valid token: %d %q", r.status, r.body)
	}
	if ec := seen.Load().(runtime.ExecutionContext); ec.Principal != "alice" || ec.Tenant != "acme" {
		t.Fatalf("execution context %+v, want alice of acme from the token", ec)
	}
}

// A body over the cap is refused before it is read whole; nothing runs.
func TestBodyCap(t *testing.T) {
	var ran atomic.Int32
	set := counted(t, &ran)
	srv := serve(t, mcpserver.New(quietExecutor(t, set), mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: true, MaxBodyBytes: 1 << 10})
	big := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"` + strings.Repeat("A", 4<<10) + `"}}}`
	if r := post(t, srv.URL, big, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}); r.status != http.StatusRequestEntityTooLarge || ran.Load() != 0 {
		t.Fatalf("over the cap: %d %q, %d runs", r.status, r.body, ran.Load())
	}
}

// No protocol error carries Go type names, paths or the rejected input:
// only its code's fixed text. An unknown tool reaches the executor (its
// audit record is written) and gets keel's fixed message, JSON-RPC -32602.
func TestProtocolErrorsSayNothingInternal(t *testing.T) {
	var audit bytes.Buffer
	exec, err := runtime.NewExecutor(generated.ToolSet(), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(&audit, nil)))))
	if err != nil {
		t.Fatal(err)
	}
	s := mcpserver.New(exec, mcpserver.Options{})
	srv := serve(t, s, mcpserver.HTTPOptions{Stateless: true})
	hdr := map[string]string{"Mcp-Protocol-Version": "2025-06-18"}
	for name, c := range map[string]struct{ body, want string }{
		"name not a string":  {`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":{"x":"SECRET-INPUT"}}}`, `"code":-32602,"message":"Invalid params."`},
		"params not object":  {`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":["SECRET-INPUT"]}`, `"message":"Invalid params."`},
		"unknown method":     {`{"jsonrpc":"2.0","id":5,"method":"SECRET-INPUT/x","params":{}}`, "Bad Request\n"},
		"unknown tool":       {`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"SECRET-INPUT","arguments":{}}}`, `"code":-32602,"message":"No tool with that name is available. Available tools: create_ticket, lookup_incident."`},
		"not JSON at all":    {`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"SECRET-INPUT"`, ``},
		"arguments a string": {`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"lookup_incident","arguments":"SECRET-INPUT"}}`, `\"code\":\"invalid_arguments\"`},
	} {
		r := post(t, srv.URL, c.body, hdr)
		if strings.Contains(r.body, "SECRET-INPUT") || strings.Contains(r.body, "mcp.") || strings.Contains(r.body, "Go ") {
			t.Errorf("%s: the error says too much: %d %q", name, r.status, r.body)
		}
		if !strings.Contains(r.body, c.want) {
			t.Errorf("%s: %d %q, want %q", name, r.status, r.body, c.want)
		}
	}
	if !strings.Contains(audit.String(), `"code":"unknown_tool"`) {
		t.Fatalf("the unknown tool has no audit record:\n%s", audit.String())
	}

	// The same over a sanitizing stdio-style transport, with the SDK client.
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "SECRET-INPUT", Arguments: map[string]any{}})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || strings.Contains(rpc.Message, "SECRET") {
		t.Fatalf("unknown tool over the transport: %v", err)
	}
}

// A token the verifier accepts but whose TokenInfo the SDK then refuses (no
// Expiration) is a 401 that says nothing to the client, and the reason is in
// the server's log, which the SDK itself leaves empty.
func TestRefusedTokenInfoIsLogged(t *testing.T) {
	var ran atomic.Int32
	set := counted(t, &ran)
	var logged bytes.Buffer
	s := mcpserver.New(quietExecutor(t, set), mcpserver.Options{})
	verifier := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: "alice"}, nil // no Expiration
	}
	srv := serve(t, s, mcpserver.HTTPOptions{Stateless: true, Verifier: verifier, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	r := post(t, srv.URL, lookupCall, map[string]string{"Authorization": "Bearer alice-token", "Mcp-Protocol-Version": "2025-06-18"})
	if r.status != http.StatusUnauthorized || ran.Load() != 0 || strings.Contains(r.body, "Expiration") {
		t.Fatalf("a TokenInfo without Expiration: %d %q, %d runs", r.status, r.body, ran.Load())
	}
	if !strings.Contains(logged.String(), "has no Expiration") || !strings.Contains(logged.String(), "AllowMissingExpiration") {
		t.Fatalf("the refusal is not logged with its reason:\n%s", logged.String())
	}
}

// One principal cannot take every session: past its own cap it gets 503,
// and another principal still opens one. A session past its maximum
// lifetime is closed however busy it is kept, so slots cannot be held for
// ever.
func TestSessionsPerPrincipal(t *testing.T) {
	t.Parallel()
	s := exampleServer(t)
	verifier := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: strings.TrimSuffix(token, "-token"), Expiration: time.Now().Add(time.Hour)}, nil
	}
	// The caps on a server whose sessions outlive any machine's delay.
	srv := serve(t, s, mcpserver.HTTPOptions{Verifier: verifier, MaxSessions: 10, MaxSessionsPerPrincipal: 3, MaxSessionLifetime: time.Hour})
	as := func(who string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + who + "-token"}
	}
	for range 3 {
		if r := post(t, srv.URL, initialize, as("mallory")); r.status != http.StatusOK || r.header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("mallory's initialize: %d %q", r.status, r.body)
		}
	}
	if r := post(t, srv.URL, initialize, as("mallory")); r.status != http.StatusServiceUnavailable {
		t.Fatalf("mallory past her cap: %d %q", r.status, r.body)
	}
	if r := post(t, srv.URL, initialize, as("alice")); r.status != http.StatusOK || r.header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("alice while mallory holds her cap: %d %q", r.status, r.body)
	}

	// The lifetime on a server of its own: mallory keeps her one session
	// busy, and past the lifetime it is closed anyway, her place free. The
	// deadline bounds a hang; it measures nothing.
	srv = serve(t, exampleServer(t), mcpserver.HTTPOptions{Verifier: verifier, MaxSessionsPerPrincipal: 1, MaxSessionLifetime: 300 * time.Millisecond})
	r := post(t, srv.URL, initialize, as("mallory"))
	if r.status != http.StatusOK || r.header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("mallory's initialize: %d %q", r.status, r.body)
	}
	hdr := as("mallory")
	hdr["Mcp-Session-Id"], hdr["Mcp-Protocol-Version"] = r.header.Get("Mcp-Session-Id"), "2025-06-18"
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := post(t, srv.URL, lookupCall, hdr)
		if r.status == http.StatusNotFound {
			break
		}
		if r.status != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("a busy session past its lifetime: %d %q", r.status, r.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := post(t, srv.URL, initialize, as("mallory")); r.status != http.StatusOK {
		t.Fatalf("mallory after her session's lifetime (her cap is 1): %d %q", r.status, r.body)
	}
}

// A burst of initializes cannot pass the caps: a slot is taken before a
// session opens and given back if none does. Before, the cap was counted
// before the session opened and recorded only after the reply, and a burst
// of 48 slow initializes from one principal got 48 sessions against a cap
// of 16.
func TestSessionCapsHoldUnderABurst(t *testing.T) {
	for _, c := range []struct {
		name           string
		global, per    int
		token          bool
		burst, allowed int
	}{
		{"per principal", 1000, 16, true, 48, 16},
		{"global", 8, 8, false, 32, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := exampleServer(t)
			s.SDK().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "initialize" {
						time.Sleep(20 * time.Millisecond) // the window the race needs
					}
					return next(ctx, method, req)
				}
			})
			opts := mcpserver.HTTPOptions{MaxSessions: c.global, MaxSessionsPerPrincipal: c.per}
			hdr := map[string]string{}
			if c.token {
				opts.Verifier = func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
					return &auth.TokenInfo{UserID: "mallory", Expiration: time.Now().Add(time.Hour)}, nil
				}
				hdr["Authorization"] = "Bearer mallory-token"
			}
			srv := serve(t, s, opts)
			var opened, refused atomic.Int32
			var wg sync.WaitGroup
			for range c.burst {
				wg.Go(func() {
					r := post(t, srv.URL, initialize, hdr)
					switch {
					case r.status == http.StatusOK && r.header.Get("Mcp-Session-Id") != "":
						opened.Add(1)
					case r.status == http.StatusServiceUnavailable:
						refused.Add(1)
					default:
						t.Errorf("initialize: %d %q", r.status, r.body)
					}
				})
			}
			wg.Wait()
			if opened.Load() != int32(c.allowed) || refused.Load() != int32(c.burst-c.allowed) {
				t.Fatalf("a burst of %d: %d sessions opened, %d refused; the cap is %d", c.burst, opened.Load(), refused.Load(), c.allowed)
			}
			// The refused requests gave their slots back: at the cap, still
			// full; nothing leaked past it.
			if r := post(t, srv.URL, initialize, hdr); r.status != http.StatusServiceUnavailable {
				t.Fatalf("after the burst: %d %q", r.status, r.body)
			}
		})
	}
}

// A tools/call whose envelope names "arguments" (or any member of the
// message or its params) twice is refused on both transports: the SDK
// would run the last, while whatever read the first approved it. Nothing
// runs; duplicates inside the arguments stay the executor's
// invalid_arguments.
func TestEnvelopeDuplicatesAreRefused(t *testing.T) {
	var ran atomic.Int32
	set := counted(t, &ran)
	s := mcpserver.New(quietExecutor(t, set), mcpserver.Options{})
	srv := serve(t, s, mcpserver.HTTPOptions{Stateless: true})
	hdr := map[string]string{"Mcp-Protocol-Version": "2025-06-18"}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"},"arguments":{"incident_id":"INC-002"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","name":"lookup_incident","arguments":{"incident_id":"INC-001"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"},"_meta":{"keel/call_id":"a","keel/call_id":"b"}}}`,
	} {
		if r := post(t, srv.URL, body, hdr); r.status != http.StatusBadRequest || strings.Contains(r.body, "INC") {
			t.Errorf("%s: %d %q", body, r.status, r.body)
		}
	}
	if ran.Load() != 0 {
		t.Fatalf("%d handler runs for refused envelopes", ran.Load())
	}
	inner := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001","incident_id":"INC-002"}}}`
	if r := post(t, srv.URL, inner, hdr); r.status != http.StatusOK || !strings.Contains(r.body, "invalid_arguments") {
		t.Fatalf("a duplicate inside the arguments: %d %q", r.status, r.body)
	}
}

// Over a stream transport (stdio), a request whose params name "arguments"
// twice is answered "Invalid params." and runs nothing.
func TestDuplicateParamsOverStdioAreRefused(t *testing.T) {
	var ran atomic.Int32
	set := counted(t, &ran)
	s := mcpserver.New(quietExecutor(t, set), mcpserver.Options{})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(raw string) {
		t.Helper()
		msg, err := jsonrpc.DecodeMessage([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	reply := func() *jsonrpc.Response {
		t.Helper()
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			t.Fatalf("not a response: %#v", msg)
		}
		return resp
	}
	send(initialize)
	if r := reply(); r.Error != nil {
		t.Fatal(r.Error)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"},"arguments":{"incident_id":"INC-002"}}}`)
	r := reply()
	var rpc *jsonrpc.Error
	if !errors.As(r.Error, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || rpc.Message != "Invalid params." || ran.Load() != 0 {
		t.Fatalf("duplicate arguments over stdio: %+v, %d runs", r, ran.Load())
	}
}

// The call that took the process down (a hand-bound tool with a minimum,
// and a number of a million digits) is one invalid_arguments result over
// Streamable HTTP, and the server answers the next call.
func TestMillionDigitNumberOverHTTP(t *testing.T) {
	tool := runtime.NewTool(runtime.ToolInfo{Name: "step", Version: "1", Effect: runtime.EffectRead, Description: "Step.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"step":{"type":"number","minimum":0,"multipleOf":0.25}},"required":["step"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct {
			Step float64 `json:"step"`
		}) (struct{}, error) {
			return struct{}{}, nil
		}))
	set := keeltest.Of(tool)
	for _, stateless := range []bool{true, false} {
		srv := serve(t, mcpserver.New(quietExecutor(t, set), mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: stateless})
		hdr := map[string]string{"Mcp-Protocol-Version": "2025-06-18"}
		if !stateless {
			r := post(t, srv.URL, initialize, nil)
			hdr["Mcp-Session-Id"] = r.header.Get("Mcp-Session-Id")
		}
		huge := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"step","arguments":{"step":0.` + strings.Repeat("0", 1_000_001) + `1}}}`
		if r := post(t, srv.URL, huge, hdr); r.status != http.StatusOK || !strings.Contains(r.body, "invalid_arguments") {
			t.Fatalf("stateless=%v, a million-digit number: %d %.300q", stateless, r.status, r.body)
		}
		ok := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"step","arguments":{"step":0.5}}}`
		if r := post(t, srv.URL, ok, hdr); r.status != http.StatusOK || strings.Contains(r.body, `"isError":true`) || !strings.Contains(r.body, `"result"`) {
			t.Fatalf("stateless=%v, the next call: %d %q", stateless, r.status, r.body)
		}
	}
}

// slowServer serves one tool that sleeps for the given milliseconds and
// reports progress once halfway.
func slowServer(t *testing.T, opts mcpserver.HTTPOptions) *httptest.Server {
	t.Helper()
	tool := runtime.NewTool(runtime.ToolInfo{Name: "slow", Version: "1", Effect: runtime.EffectRead, Description: "Sleeps.", Timeout: 10 * time.Second,
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"}},"required":["ms"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, a struct {
			MS int `json:"ms"`
		}) (struct{}, error) {
			time.Sleep(time.Duration(a.MS/2) * time.Millisecond)
			report.Progress(ctx, 1, 2, "halfway")
			time.Sleep(time.Duration(a.MS/2) * time.Millisecond)
			return struct{}{}, nil
		}))
	set := keeltest.Of(tool)
	exec, err := runtime.NewExecutor(set, runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, mcpserver.New(exec, mcpserver.Options{}), opts)
}

// A call that asked for progress is answered as an event stream: the
// progress notification, heartbeat comments while the handler waits, then
// the result. The same call without a token is one application/json body,
// with no heartbeat in it. The handler waits for the test, not a clock: it
// ends once the stream has shown two heartbeats, however slow the machine.
func TestProgressCallsStreamWithHeartbeats(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := serve(t, gatedServer(t, release), mcpserver.HTTPOptions{Stateless: true, Heartbeat: 30 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := send(t, ctx, srv.URL, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":"p1"},"name":"gate","arguments":{}}}`,
		map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	var got []byte
	buf := make([]byte, 512)
	for !strings.Contains(string(got), `"method":"notifications/progress"`) || strings.Count(string(got), ": keepalive\n\n") < 2 {
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("the stream ended before the progress and two heartbeats: %v after %q", err, got)
		}
	}
	if strings.Contains(string(got), `"result"`) {
		t.Fatalf("a result before the handler ended: %q", got)
	}
	close(release)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body := string(got) + string(rest)
	progress := strings.Index(body, `"method":"notifications/progress"`)
	result := strings.Index(body, `"id":7,"result"`)
	if result < progress || !strings.Contains(body, `"progressToken":"p1"`) || !strings.Contains(body, `"message":"halfway"`) {
		t.Fatalf("stream %q", body)
	}

	// Without a token: the handler runs five heartbeat periods at least.
	later := make(chan struct{})
	time.AfterFunc(150*time.Millisecond, func() { close(later) })
	srv = serve(t, gatedServer(t, later), mcpserver.HTTPOptions{Stateless: true, Heartbeat: 30 * time.Millisecond})
	r := post(t, srv.URL, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"gate","arguments":{}}}`, map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" || strings.Contains(r.body, "keepalive") ||
		!strings.HasPrefix(r.body, `{"jsonrpc":"2.0","id":8,"result"`) {
		t.Fatalf("%d %v %q", r.status, r.header, r.body)
	}
}

// gatedServer serves one tool that reports progress, then waits until
// release is closed (or its 20 s timeout).
func gatedServer(t *testing.T, release <-chan struct{}) *mcpserver.Server {
	t.Helper()
	tool := runtime.NewTool(runtime.ToolInfo{Name: "gate", Version: "1", Effect: runtime.EffectRead, Description: "Waits for the test.", Timeout: 20 * time.Second,
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (struct{}, error) {
			report.Progress(ctx, 1, 2, "halfway")
			select {
			case <-release:
			case <-ctx.Done():
			}
			return struct{}{}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return mcpserver.New(exec, mcpserver.Options{})
}

// An error on the event stream says only its code's fixed text, as on the
// JSON path: the SDK's own message here names a Go struct field.
func TestStreamedErrorsSayNothingInternal(t *testing.T) {
	var logged bytes.Buffer
	srv := slowServer(t, mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	r := post(t, srv.URL, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"_meta":{"progressToken":"p"},"name":5}}`,
		map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("not an event stream: %v %q", r.header, r.body)
	}
	if want := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32602,\"message\":\"Invalid params.\"}}\n\n"; r.body != want {
		t.Errorf("stream %q\nwant   %q", r.body, want)
	}
	if !strings.Contains(logged.String(), "Go struct field") {
		t.Errorf("the detail was not logged: %s", logged.String())
	}
}

func TestNegativeHeartbeatRefused(t *testing.T) {
	if _, err := mcpserver.HTTPHandler(exampleServer(t), mcpserver.HTTPOptions{Heartbeat: -time.Second}); err == nil {
		t.Fatal("a negative heartbeat was accepted")
	}
}

// A session's GET stream, which may carry nothing for a long time, gets the
// heartbeat too.
func TestStandaloneStreamHeartbeats(t *testing.T) {
	srv := serve(t, exampleServer(t), mcpserver.HTTPOptions{Heartbeat: 20 * time.Millisecond})
	r := post(t, srv.URL, initialize, nil)
	id := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %q", r.status, r.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got []byte
	buf := make([]byte, 512)
	for strings.Count(string(got), ": keepalive\n\n") < 2 {
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("the stream ended: %v after %q", err, got)
		}
	}
}

// upstreamKey is the test deployment's context key: where a call's
// upstream is, and the caller's credential for it.
type upstreamKey struct{}

type upstream struct{ url, credential string }

// Per-request values reach the handler through Options.RequestContext: each
// caller's upstream URL (a header the server chose to read) and credential
// (a claim of the verified token). They are in no argument, and the audit
// does not hold them.
func TestRequestValuesReachTheHandler(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // upstream path → Authorization it got
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		w.Write([]byte(`{"status":"green"}`))
	}))
	defer api.Close()

	tool := runtime.NewTool(runtime.ToolInfo{Name: "report", Version: "1", Effect: runtime.EffectRead, Description: "Reads the caller's report.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"status":{"type":"string"}},"required":["status"]}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (map[string]any, error) {
			up, ok := ctx.Value(upstreamKey{}).(upstream)
			if !ok {
				return nil, runtime.Fail("no_upstream", "No upstream for this caller.")
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, up.url, nil)
			req.Header.Set("Authorization", "Bearer "+up.credential)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			var out map[string]any
			return out, json.NewDecoder(resp.Body).Decode(&out)
		}))
	var audit bytes.Buffer
	var auditMu sync.Mutex
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(lockedWriter{&auditMu, &audit}, nil)))))
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]string{"alice-token": "alice-secret", "bob-token": "bob-secret"}
	verifier := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: strings.TrimSuffix(token, "-token"), Expiration: time.Now().Add(time.Hour),
			Extra: map[string]any{"upstream_key": claims[token]}}, nil
	}
	s := mcpserver.New(exec, mcpserver.Options{
		Context: mcpserver.TokenContext(func(_ context.Context, tok *auth.TokenInfo) runtime.ExecutionContext {
			return runtime.ExecutionContext{Tenant: "acme", Principal: tok.UserID}
		}),
		RequestContext: func(ctx context.Context, req *mcp.CallToolRequest) context.Context {
			if req.Extra == nil || req.Extra.TokenInfo == nil {
				return ctx
			}
			key, _ := req.Extra.TokenInfo.Extra["upstream_key"].(string)
			return context.WithValue(ctx, upstreamKey{}, upstream{url: api.URL + req.Extra.Header.Get("X-Upstream-Path"), credential: key})
		},
	})
	srv := serve(t, s, mcpserver.HTTPOptions{Stateless: true, Verifier: verifier})
	for _, who := range []string{"alice", "bob"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"report","arguments":{},` + meta2026("2026-07-28") + `}}`
		r := post(t, srv.URL, body, map[string]string{"Authorization": "Bearer " + who + "-token", "X-Upstream-Path": "/" + who,
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "report"})
		if r.status != 200 || !strings.Contains(r.body, `"status":"green"`) {
			t.Fatalf("%s: %d %s", who, r.status, r.body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["/alice"] != "Bearer alice-secret" || seen["/bob"] != "Bearer bob-secret" || len(seen) != 2 {
		t.Fatalf("the upstream saw %v", seen)
	}
	auditMu.Lock()
	defer auditMu.Unlock()
	if logged := audit.String(); strings.Contains(logged, "secret") || !strings.Contains(logged, `"principal":"alice"`) {
		t.Fatalf("the audit holds a credential, or no call:\n%s", logged)
	}
}
