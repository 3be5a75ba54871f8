package mcpserver_test

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
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
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		goruntime.GC()
		if n := goruntime.NumGoroutine(); n <= before+2 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after the slow bodies, %d before", n, before)
		}
	}
}
