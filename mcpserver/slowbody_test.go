package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
	"github.com/keelgen/keel/runtime/report"
)

// A client that sends a POST's body slower than ReadBodyTimeout (a
// slow-loris) is answered 408 and its connection closed, each of many at
// once, within the bound; nothing runs, and the goroutines return to
// their baseline. A body sent in time is served.
func TestASlowBodyIsDroppedAtItsDeadline(t *testing.T) {
	var ran atomic.Int32
	exec, err := runtime.NewExecutor(counted(t, &ran), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, mcpserver.New(exec, mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: true, ReadBodyTimeout: 300 * time.Millisecond})
	addr := strings.TrimPrefix(srv.URL, "http://")
	goruntime.GC()
	before := goruntime.NumGoroutine()
	const clients = 100
	conns := make([]net.Conn, clients)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"Mcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", addr, len(lookupCall), lookupCall[:10]) // and then nothing
		conns[i] = c
	}
	start := time.Now()
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(10 * time.Second)) // the test's own bound, far past the server's
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || res.StatusCode != http.StatusRequestTimeout {
			t.Fatalf("client %d: %v %v", i, res, err)
		}
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatalf("client %d: the connection stays open", i)
		}
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("the slow bodies were dropped after %v", waited)
	}
	if ran.Load() != 0 {
		t.Errorf("%d calls ran", ran.Load())
	}
	if r := post(t, srv.URL, lookupCall, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}); r.status != http.StatusOK {
		t.Errorf("a body sent in time: %d %s", r.status, r.body)
	}
	http.DefaultClient.CloseIdleConnections()
	goroutinesBackTo(t, before, "the slow bodies")
}

// goroutinesBackTo waits until the goroutines are back to before (two
// more allowed), or fails the test after 10 s.
func goroutinesBackTo(t *testing.T, before int, after string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		goruntime.GC()
		if n := goruntime.NumGoroutine(); n <= before+2 {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after %s, %d before", n, after, before)
		}
	}
}

// A client that asks for a progress stream and then reads nothing is
// dropped once a write has waited WriteEventTimeout: its call is
// cancelled, the server closes its connection, and the goroutines return
// to their baseline, for each of many such clients at once. The connections'
// buffers are made small so that the heartbeats fill them quickly.
func TestAnUnreadStreamIsDropped(t *testing.T) {
	var started, cancelled atomic.Int32
	tool := runtime.NewTool(runtime.ToolInfo{Name: "gate", Version: "1", Effect: runtime.EffectRead, Description: "Waits to be cancelled.", Timeout: time.Minute,
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (struct{}, error) {
			started.Add(1)
			report.Progress(ctx, 1, 2, "waiting")
			<-ctx.Done()
			cancelled.Add(1)
			return struct{}{}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpserver.HTTPHandler(mcpserver.New(exec, mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: true,
		Heartbeat: time.Millisecond, WriteEventTimeout: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = smallBuffers{srv.Listener}
	var closed atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateClosed {
			closed.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	goruntime.GC()
	before := goruntime.NumGoroutine()
	const clients = 20
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"p"},"name":"gate","arguments":{}}}`
	conns := make([]*net.TCPConn, clients)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c.(*net.TCPConn)
		conns[i].SetReadBuffer(1024)
		defer c.Close()
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"Mcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body) // and then reads nothing
	}
	for deadline := time.Now().Add(30 * time.Second); cancelled.Load() < clients; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d unread streams' calls were cancelled (%d started)", cancelled.Load(), clients, started.Load())
		}
	}
	for deadline := time.Now().Add(10 * time.Second); closed.Load() < clients; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) { // the server's side: the client's may never hear of it while its window is shut
			t.Fatalf("the server closed %d of %d unread streams' connections", closed.Load(), clients)
		}
	}
	goroutinesBackTo(t, before, "the unread streams")
}

// smallBuffers gives each accepted connection a small send buffer.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(1024)
	}
	return c, err
}
