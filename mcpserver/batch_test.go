package mcpserver_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/keelgen/keel/mcpserver"
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
