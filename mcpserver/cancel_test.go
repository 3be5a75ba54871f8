package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/redistasks"
	"github.com/keelgen/keel/redistest"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// On a Stateless server, a notifications/cancelled sent in a POST of its
// own (as the TypeScript client sends it, keeping the call's POST open)
// ends the call it names when it comes from the same principal: the
// handler's context ends and the audit records tool_cancelled. Another
// principal's cancel with the same request id ends nothing.
func TestStatelessCancelFromAnotherPost(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	ended := make(chan struct{}, 1)
	var audit bytes.Buffer
	var mu sync.Mutex
	exec, err := runtime.NewExecutor(keeltest.Of(waitTool(started, ended)), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(lockedWriter{&mu, &audit}, nil)))))
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, mcpserver.New(exec, mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: true, Verifier: twoUsers})
	post := func(token, body string) { postAs(t, srv.URL, token, body) }
	done := make(chan struct{})
	go func() {
		defer close(done)
		post("alice-token", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	}()
	<-started
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user pressed stop"}}`
	post("mallory-token", cancel)
	select {
	case <-ended:
		t.Fatal("another principal's cancel ended alice's call")
	case <-time.After(200 * time.Millisecond):
	}
	post("alice-token", cancel)
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("alice's cancel did not end her call")
	}
	<-done
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		logged := audit.String()
		mu.Unlock()
		if strings.Contains(logged, `"code":"tool_cancelled"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit log has no tool_cancelled:\n%s", logged)
		}
	}
}

// waitTool is a tool whose call says when it starts, then waits for its
// context to end and says so.
func waitTool(started, ended chan struct{}) *runtime.Tool {
	return runtime.NewTool(runtime.ToolInfo{Name: "wait", Version: "1", Effect: runtime.EffectRead, Description: "Waits.", Timeout: 10 * time.Second,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (struct{}, error) {
			started <- struct{}{}
			<-ctx.Done()
			ended <- struct{}{}
			return struct{}{}, ctx.Err()
		}))
}

// twoUsers verifies alice's token and mallory's.
func twoUsers(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	users := map[string]string{"alice-token": "alice", "mallory-token": "mallory"}
	return &auth.TokenInfo{UserID: users[token], Expiration: time.Now().Add(time.Hour)}, nil
}

// postAs posts a 2025-11-25 message with a bearer token.
func postAs(t *testing.T, url, token, body string) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
}

// Two Stateless replicas on one Redis (HTTPOptions.CancelSignals): a
// notifications/cancelled that reaches the replica the call does not run
// on ends it where it runs; another principal's does not, nor does a
// cancel sent before the call started.
func TestCancelReachesAnotherReplica(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t)
	started := make(chan struct{}, 1)
	ended := make(chan struct{}, 1)
	replica := func() *httptest.Server {
		exec, err := runtime.NewExecutor(keeltest.Of(waitTool(started, ended)), runtime.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		signals, err := redistasks.New(rdb.Client(), redistasks.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return serve(t, mcpserver.New(exec, mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: true, Verifier: twoUsers, CancelSignals: signals})
	}
	a, b := replica(), replica()
	signals, _ := redistasks.New(rdb.Client(), redistasks.Options{})
	if _, err := mcpserver.HTTPHandler(mcpserver.New(quietExecutor(t, keeltest.Of(waitTool(started, ended))), mcpserver.Options{}), mcpserver.HTTPOptions{CancelSignals: signals}); err == nil {
		t.Fatal("CancelSignals without a Verifier was accepted: no cancel could name a principal")
	}
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`
	postAs(t, b.URL, "alice-token", cancel) // before the call: it names no call yet
	done := make(chan struct{})
	go func() {
		defer close(done)
		postAs(t, a.URL, "alice-token", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	}()
	<-started
	postAs(t, b.URL, "mallory-token", cancel)
	select {
	case <-ended:
		t.Fatal("an earlier cancel, or another principal's, ended alice's call")
	case <-time.After(800 * time.Millisecond):
	}
	postAs(t, b.URL, "alice-token", cancel)
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("alice's cancel on the other replica did not end her call")
	}
	<-done
}

// A stateless cancel ends only the call of the client that sent it: two
// clients of one principal, each with a token of its own, both number
// their call 7 (two TypeScript clients do), and each cancel ends its own
// sender's call alone; a same-named principal of another tenant ends
// nothing. Two calls in flight that one client numbered alike are not told
// apart, so a cancel ends neither; their POSTs' ends still do.
func TestStatelessCancelEndsOnlyItsClientsCall(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 4)
	ended := make(chan struct{}, 4)
	exec, err := runtime.NewExecutor(keeltest.Of(waitTool(started, ended)), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		// Two of alice's clients, and an alice of another tenant.
		users := map[string]string{"alice-laptop": "alice", "alice-phone": "alice", "other-tenant-alice": "alice"}
		return &auth.TokenInfo{UserID: users[token], Expiration: time.Now().Add(time.Hour)}, nil
	}
	srv := serve(t, mcpserver.New(exec, mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: true, Verifier: verify})
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`
	var calls sync.WaitGroup
	for _, token := range []string{"alice-laptop", "alice-phone"} {
		calls.Go(func() { postAs(t, srv.URL, token, call) })
		<-started
	}
	endedWithin := func(d time.Duration) bool {
		select {
		case <-ended:
			return true
		case <-time.After(d):
			return false
		}
	}
	postAs(t, srv.URL, "other-tenant-alice", cancel)
	if endedWithin(200 * time.Millisecond) {
		t.Fatal("a same-named principal of another tenant ended a call")
	}
	postAs(t, srv.URL, "alice-phone", cancel)
	if !endedWithin(5 * time.Second) {
		t.Fatal("the phone's cancel did not end the phone's call")
	}
	if endedWithin(200 * time.Millisecond) {
		t.Fatal("the phone's cancel ended the laptop's call too")
	}
	postAs(t, srv.URL, "alice-laptop", cancel)
	if !endedWithin(5 * time.Second) {
		t.Fatal("the laptop's cancel did not end its call")
	}
	calls.Wait()

	// One client, two calls numbered 7 at once: the cancel ends neither;
	// closing their POSTs ends both.
	ctx, closePosts := context.WithCancel(context.Background())
	for range 2 {
		calls.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(call))
			req.Header.Set("Authorization", "Bearer alice-laptop")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
		<-started
	}
	postAs(t, srv.URL, "alice-laptop", cancel)
	if endedWithin(200 * time.Millisecond) {
		t.Fatal("a cancel that names two calls of one client ended one")
	}
	closePosts()
	for range 2 {
		if !endedWithin(5 * time.Second) {
			t.Fatal("closing a call's POST did not end it")
		}
	}
	calls.Wait()
}

// A call cancelled while its POST is still open gets its answer on that
// POST, tool_cancelled, stateless as with a session: the stateless cancel
// ended the POST's own context, and the SDK answered it 500 (every time
// here; 3 of 8 tries in a review).
func TestACancelledCallsPostEndsCleanly(t *testing.T) {
	t.Parallel()
	for _, stateless := range []bool{true, false} {
		started := make(chan struct{}, 1)
		ended := make(chan struct{}, 1)
		exec, err := runtime.NewExecutor(keeltest.Of(waitTool(started, ended)), runtime.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		srv := serve(t, mcpserver.New(exec, mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: stateless, Verifier: twoUsers})
		send := func(body, session string) (*http.Response, string) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer alice-token")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return nil, ""
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp, string(b)
		}
		session := ""
		if !stateless {
			resp, _ := send(strings.Replace(initialize, "2025-06-18", "2025-11-25", 1), "")
			session = resp.Header.Get("Mcp-Session-Id")
		}
		for try := range 8 {
			answer := make(chan string, 1)
			go func() {
				resp, body := send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`, session)
				if resp == nil {
					answer <- "no response"
					return
				}
				answer <- resp.Status + " " + body
			}()
			<-started
			send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, session)
			<-ended
			if got := <-answer; !strings.HasPrefix(got, "200 ") || !strings.Contains(got, "tool_cancelled") {
				t.Fatalf("stateless=%v, try %d: the cancelled call's POST: %.300s", stateless, try, got)
			}
		}
	}
}

// In a session keel answers a call, and a notifications/cancelled ends it
// only from the user who opened the session: another user who holds the
// session's id (and whose POST the SDK refuses, 403) ends nothing.
func TestSessionCancelIsTheSessionUsers(t *testing.T) {
	t.Parallel()
	started, ended := make(chan struct{}, 1), make(chan struct{}, 1)
	s := mcpserver.New(quietExecutor(t, keeltest.Of(waitTool(started, ended))), mcpserver.Options{})
	srv := serve(t, s, mcpserver.HTTPOptions{Verifier: twoUsers})
	as := func(token, session string) map[string]string {
		h := map[string]string{"Authorization": "Bearer " + token, "Mcp-Protocol-Version": "2025-11-25"}
		if session != "" {
			h["Mcp-Session-Id"] = session
		}
		return h
	}
	open := post(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, as("alice-token", ""))
	session := open.header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize: %d %s", open.status, open.body)
	}
	post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, as("alice-token", session))
	done := make(chan rawReply, 1)
	go func() {
		done <- post(t, srv.URL, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`, as("alice-token", session))
	}()
	<-started
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`
	if r := post(t, srv.URL, cancel, as("mallory-token", session)); r.status != http.StatusForbidden {
		t.Errorf("another user's notice on the session: %d %s", r.status, r.body)
	}
	select {
	case <-ended:
		t.Fatal("another user's cancel ended the session's call")
	case <-time.After(200 * time.Millisecond):
	}
	post(t, srv.URL, cancel, as("alice-token", session))
	if r := <-done; !strings.Contains(r.body, "tool_cancelled") {
		t.Fatalf("the session user's cancel: %d %s", r.status, r.body)
	}
}

// A stateless call is tracked for cancels by the front's one reading of
// its envelope: a member named like "method" but for case (which
// encoding/json, reading the body a second time, took as the method) makes
// the call no cancel, and the client's cancel ends it. Before, that second
// reading took the call for a cancel, did not track it, and nothing could
// end it but its POST.
func TestStatelessCancelReadsTheEnvelopeOnce(t *testing.T) {
	t.Parallel()
	started, ended := make(chan struct{}, 1), make(chan struct{}, 1)
	s := mcpserver.New(quietExecutor(t, keeltest.Of(waitTool(started, ended))), mcpserver.Options{})
	srv := serve(t, s, mcpserver.HTTPOptions{Stateless: true, Verifier: twoUsers})
	go postAs(t, srv.URL, "alice-token", `{"jsonrpc":"2.0","id":7,"method":"tools/call","METHOD":"notifications/cancelled","params":{"name":"wait","arguments":{},"requestId":8}}`)
	<-started
	postAs(t, srv.URL, "alice-token", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the client's cancel did not end its call")
	}
}
