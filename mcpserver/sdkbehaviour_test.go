package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Each test here shows one behaviour of the go-sdk that keel's seam with it
// depends on, named after it: the day the SDK changes, the test says what
// in mcpserver to change, or what can go.

const sdkInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func sdkPost(t *testing.T, h http.Handler, body string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// sessionCap.note finds the SDK's session of a new id in Server.Sessions
// when the initialize answer is written: the SDK lists it before. The SDK
// promises less (go-sdk v1.8.0, mcp/server.go, Server.Sessions: "There is
// no guarantee that the iterator observes sessions that are added or
// removed during iteration"), so this order is what the test pins; the day
// it changes, sessionCap counts the pending request instead (it does, for
// a session the SDK holds and keel has not recorded).
func TestSDKListsASessionBeforeItAnswersItsInitialize(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	listed, asked := false, false
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(sdkInitialize))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	h.ServeHTTP(onHeader{w, func(id string) {
		if asked || id == "" {
			return
		}
		asked = true // the answer's first write
		for ss := range s.Sessions() {
			listed = listed || ss.ID() == id
		}
	}}, r)
	if !asked || !listed {
		t.Fatal("the SDK wrote the initialize answer before it listed the session")
	}
}

// onHeader calls f with the session id once, when the answer starts.
type onHeader struct {
	*httptest.ResponseRecorder
	f func(session string)
}

func (o onHeader) WriteHeader(code int) {
	if o.f != nil {
		o.f(o.Header().Get("Mcp-Session-Id"))
	}
	o.ResponseRecorder.WriteHeader(code)
}

func (o onHeader) Write(b []byte) (int, error) {
	if o.f != nil {
		o.f(o.Header().Get("Mcp-Session-Id"))
	}
	return o.ResponseRecorder.Write(b)
}

func (o onHeader) Flush() { o.ResponseRecorder.Flush() }

// HTTPHandler gives the SDK's stateful handler no SessionTimeout, and keeps
// the idle timeout itself (sessionCap), since keel answers a session's
// calls: with none, the SDK never closes an idle session, as its option
// says (go-sdk v1.8.0, mcp/streamable.go, StreamableHTTPOptions.SessionTimeout:
// "If SessionTimeout is the zero value, idle sessions are never closed").
func TestSDKKeepsAnIdleSessionWithoutASessionTimeout(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{SessionTimeout: 0})
	id := sdkPost(t, h, sdkInitialize, nil).Header().Get("Mcp-Session-Id")
	time.Sleep(200 * time.Millisecond)
	for ss := range s.Sessions() {
		if ss.ID() == id {
			return
		}
	}
	t.Fatal("the SDK closed an idle session with no SessionTimeout")
}

// sessionCap.forgetWhenClosed waits on ServerSession.Wait, which returns
// when the session closes (a DELETE, Close): keel then answers none of its
// calls, and drops its taint. The SDK says so for a client's close (go-sdk
// v1.8.0, mcp/server.go, ServerSession.Wait: "Wait waits for the connection
// to be closed by the client"); this test pins the server's Close and a
// DELETE too.
func TestSDKSessionWaitEndsWhenTheSessionCloses(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	id := sdkPost(t, h, sdkInitialize, nil).Header().Get("Mcp-Session-Id")
	var ss *mcp.ServerSession
	for s := range s.Sessions() {
		if s.ID() == id {
			ss = s
		}
	}
	done := make(chan struct{})
	go func() { ss.Wait(); close(done) }()
	r := httptest.NewRequest(http.MethodDelete, "/", nil)
	r.Header.Set("Mcp-Session-Id", id)
	h.ServeHTTP(httptest.NewRecorder(), r)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ServerSession.Wait did not return after the session's DELETE")
	}
}

// New's middleware keeps a session's log level (handler.levels) from the
// SDK's logging/setLevel request, which reaches it as this type; the SDK
// keeps its own (ServerSessionState.LogLevel, unexported to a server's
// code) and exposes none. The spec text keel follows: a server sends
// notifications/message at or above the level the client set with
// logging/setLevel (MCP 2025-11-25, server/utilities/logging); from
// 2026-07-28 a request names its own level in _meta, which go-sdk keeps
// per request since modelcontextprotocol/go-sdk#1168.
func TestSDKSetLevelReachesMiddlewareAsItsRequestType(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}})
	var level mcp.LoggingLevel
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if set, ok := req.(*mcp.ServerRequest[*mcp.SetLoggingLevelParams]); ok && method == "logging/setLevel" {
				level = set.Params.Level
			}
			return next(ctx, method, req)
		}
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	id := sdkPost(t, h, sdkInitialize, nil).Header().Get("Mcp-Session-Id")
	in := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"}
	sdkPost(t, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, in)
	sdkPost(t, h, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`, in)
	if level != "warning" {
		t.Fatalf("the middleware read the level %q", level)
	}
}

// A call keel answers without a session has req.Session nil: the
// request's own accessors read its client from its _meta (mcp.md, "Who
// reads a message"), as owners' hooks are told to. The SDK documents it
// (go-sdk v1.8.0, mcp/shared.go, ServerRequest.ClientInfo: "For requests
// following the >= 2026-07-28 protocol, the value is read from the
// per-request `_meta` field"), and the 2026-07-28 revision puts the
// client's info and capabilities in every request's _meta.
func TestSDKRequestAccessorsReadTheMetaWithoutASession(t *testing.T) {
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: mcp.Meta{
		mcp.MetaKeyClientInfo:         map[string]any{"name": "ci", "version": "1"},
		mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}},
	}}}
	if info := req.ClientInfo(); info == nil || info.Name != "ci" {
		t.Fatalf("ClientInfo: %+v", info)
	}
	if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
		t.Fatalf("ClientCapabilities: %+v", caps)
	}
}
