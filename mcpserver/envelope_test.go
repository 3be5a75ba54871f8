package mcpserver_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
)

// A JSON-RPC batch (gone from MCP since 2025-06-18) is refused over HTTP
// before any code runs, with a session opened at 2025-03-26, which had
// batches, and stateless with no version header: 400, as a body that is
// not one JSON value is. The SDK would read a batch itself, past the front,
// and run the last of a member named twice.
func TestBatchesAreRefusedOverHTTP(t *testing.T) {
	batches := []string{
		`[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lookup_incident","name":"create_ticket","arguments":{"incident_id":"INC-001","summary":"s"}}}]`,
		`[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"},"arguments":{"incident_id":"INC-002"}}}]`,
		`[` + lookupCall + `]`,
		`[` + lookupCall + `,` + strings.Replace(lookupCall, `"id":2`, `"id":4`, 1) + `]`,
		` [` + lookupCall + `] `,
		`[]`,
	}
	for _, mode := range []struct {
		name string
		opts mcpserver.HTTPOptions
	}{{"stateless", mcpserver.HTTPOptions{Stateless: true}}, {"sessions", mcpserver.HTTPOptions{}}} {
		t.Run(mode.name, func(t *testing.T) {
			var ran atomic.Int32
			s := mcpserver.New(quietExecutor(t, counted(t, &ran)), mcpserver.Options{})
			srv := serve(t, s, mode.opts)
			hdr := map[string]string{}
			if !mode.opts.Stateless {
				init := strings.Replace(initialize, "2025-06-18", "2025-03-26", 1)
				r := post(t, srv.URL, init, nil)
				if r.status != http.StatusOK || r.header.Get("Mcp-Session-Id") == "" {
					t.Fatalf("initialize at 2025-03-26: %d %q", r.status, r.body)
				}
				hdr["Mcp-Session-Id"] = r.header.Get("Mcp-Session-Id")
				hdr["Mcp-Protocol-Version"] = "2025-03-26"
				post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
			}
			for _, b := range batches {
				r := post(t, srv.URL, b, hdr)
				if r.status != http.StatusBadRequest || strings.Contains(r.body, "INC") {
					t.Errorf("%s: %d %q", b, r.status, r.body)
				}
			}
			if ran.Load() != 0 {
				t.Fatalf("%d handler runs for batches", ran.Load())
			}
			// The server goes on serving single messages.
			if r := post(t, srv.URL, lookupCall, hdr); r.status != http.StatusOK || ran.Load() != 1 {
				t.Fatalf("a call after the batches: %d %q (%d runs)", r.status, r.body, ran.Load())
			}
		})
	}
}

// A body under MaxBodyBytes reaches keel's answer and its audit record
// whatever the front then does to it: a call whose arguments were 3.5 MiB of
// a 4 MiB cap was refused 413, unaudited, because the front's rewrite grew
// it past the SDK's cap. A body over the cap is 413, and nothing runs.
func TestABodyUnderTheCapIsAnswered(t *testing.T) {
	var ran atomic.Int32
	var audit bytes.Buffer
	var mu sync.Mutex
	exec, err := runtime.NewExecutor(counted(t, &ran), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithLimits(runtime.Limits{MaxArgumentBytes: 8 << 20}),
		runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(lockedWriter{&mu, &audit}, nil)))))
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, mcpserver.New(exec, mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: true})
	hdr := map[string]string{"Mcp-Protocol-Version": "2025-06-18"}
	call := func(n int) string {
		return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"` + strings.Repeat("x", n) + `"}}}`
	}
	under := call(mcpserver.DefaultMaxBodyBytes - 200)
	// The schema bounds an incident id far below this: keel's invalid_arguments.
	if r := post(t, srv.URL, under, hdr); r.status != http.StatusOK || !strings.Contains(r.body, "invalid_arguments") {
		t.Fatalf("a body of %d bytes under a cap of %d: %d %.200q (ran %d)", len(under), mcpserver.DefaultMaxBodyBytes, r.status, r.body, ran.Load())
	}
	mu.Lock()
	audited := strings.Count(audit.String(), `"msg":"keel.call"`)
	mu.Unlock()
	if audited != 1 || !strings.Contains(audit.String(), `"code":"invalid_arguments"`) {
		t.Fatalf("%d audit records for the call: %.300s", audited, audit.String())
	}
	if r := post(t, srv.URL, call(mcpserver.DefaultMaxBodyBytes), hdr); r.status != http.StatusRequestEntityTooLarge || ran.Load() != 0 {
		t.Fatalf("a body over the cap: %d %q (ran %d)", r.status, r.body, ran.Load())
	}
}
