package mcpserver_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest/doortest"
)

// fuzzServer is the corpus fixture's server, made once per fuzz process.
func fuzzServer(f *testing.F) *mcpserver.Server {
	fx, err := doortest.New()
	if err != nil {
		f.Fatal(err)
	}
	return mcpserver.New(fx.Exec, mcpserver.Options{Context: func(context.Context, *mcp.CallToolRequest) runtime.ExecutionContext {
		return doortest.Caller()
	}})
}

func seedFrames(f *testing.F) {
	for _, fr := range doortest.Frames() {
		f.Add([]byte(fr.Bytes))
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"x":1e400},"_meta":{"keel/front":"x"}}}`))
}

// Any bytes on a stdio stream, after a normal initialize: the server
// answers a ping that follows them, and is still running.
func FuzzStdioStream(f *testing.F) {
	s := fuzzServer(f)
	seedFrames(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			done <- s.Run(ctx, &mcp.IOTransport{Reader: inR, Writer: outW, MaxLineLength: 1 << 16})
		}()
		defer inW.Close()
		defer outR.Close()
		pong := make(chan bool, 1)
		go func() {
			lines := bufio.NewScanner(outR)
			lines.Buffer(nil, 1<<20)
			for lines.Scan() {
				if strings.Contains(lines.Text(), `"id":"fuzz-ping"`) {
					pong <- !strings.Contains(lines.Text(), `"error"`)
					return
				}
			}
			pong <- false
		}()
		go func() {
			io.WriteString(inW, initialize+"\n")
			inW.Write(data)
			io.WriteString(inW, "\n"+`{"jsonrpc":"2.0","id":"fuzz-ping","method":"ping"}`+"\n")
		}()
		select {
		case ok := <-pong:
			if !ok {
				t.Fatalf("no pong after %q", data)
			}
		case err := <-done:
			t.Fatalf("the server stopped on %q: %v", data, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer in 10 s after %q", data)
		}
	})
}

// Any bytes as a POST body, stateless and with a session: a status below
// 500, and the next valid call is answered.
func FuzzHTTPBody(f *testing.F) {
	s := fuzzServer(f)
	handlers := map[bool]http.Handler{}
	for _, stateless := range []bool{true, false} {
		h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Stateless: stateless, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			f.Fatal(err)
		}
		handlers[stateless] = h
	}
	send := func(h http.Handler, body string, header http.Header) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header[k] = v
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	init := send(handlers[false], initialize, nil)
	session := http.Header{"Mcp-Session-Id": {init.Header().Get("Mcp-Session-Id")}, "Mcp-Protocol-Version": {"2025-06-18"}}
	seedFrames(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for stateless, h := range handlers {
			header := session
			if stateless {
				header = nil
			}
			if w := send(h, string(data), header); w.Code >= 500 {
				t.Fatalf("stateless=%v: %d for %q", stateless, w.Code, data)
			}
			w := send(h, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"}}}`, header)
			if w.Code != 200 || !strings.Contains(w.Body.String(), "INC-001") {
				t.Fatalf("stateless=%v: after %q the next call got %d %s", stateless, data, w.Code, w.Body)
			}
		}
	})
}
