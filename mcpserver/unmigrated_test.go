package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
)

// unmigratedServer serves the example's tools through keel and "regions",
// an SDK tool not moved yet whose argument a client mirrors into a header
// (x-mcp-header); seen reports the last _meta and arguments it was given.
func unmigratedServer(t *testing.T) (s *mcpserver.Server, seen func() (mcp.Meta, string)) {
	t.Helper()
	s = mcpserver.New(quietExecutor(t, generated.ToolSet()), mcpserver.Options{Unmigrated: []string{"regions"}})
	var mu sync.Mutex
	var meta mcp.Meta
	var args string
	s.SDK().AddTool(&mcp.Tool{Name: "regions", Description: "Lists regions (not moved yet).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			defer mu.Unlock()
			meta, args = req.Params.Meta, string(req.Params.Arguments)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	return s, func() (mcp.Meta, string) {
		mu.Lock()
		defer mu.Unlock()
		return meta, args
	}
}

// An Unmigrated tool's handler reads the call its client sent: the front's
// members (its per-process mark, the arguments it carried past the SDK)
// never reach it, over stdio framing or HTTP. Before, both did, and over
// HTTP the SDK checked the tool's Mcp-Param header against arguments the
// front had moved away: the matching header was refused (-32020).
func TestUnmigratedToolsReadTheCallAsSent(t *testing.T) {
	s, seen := unmigratedServer(t)
	check := func(where string) {
		t.Helper()
		meta, args := seen()
		for k := range meta {
			if strings.HasPrefix(k, "keel/") {
				t.Errorf("%s: the front's member %q reached the SDK's tool: %v", where, k, meta)
			}
		}
		if meta["trace"] != "t-1" {
			t.Errorf("%s: the client's own _meta is lost: %v", where, meta)
		}
		if !strings.Contains(args, `"eu-1"`) {
			t.Errorf("%s: the arguments: %s", where, args)
		}
	}

	line, _ := startStdio(t, s)
	line.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"regions","arguments":{"region":"eu-1"},"_meta":{"trace":"t-1"}}}`)
	if r := line.reply(); r["error"] != nil {
		t.Fatalf("stdio: %v", r)
	}
	check("stdio")

	srv := serve(t, s, mcpserver.HTTPOptions{Stateless: true})
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"regions","arguments":{"region":"eu-1"},"_meta":{"trace":"t-1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "regions", "Mcp-Param-Region": "eu-1"}
	if r := post(t, srv.URL, body, headers); r.status != 200 || strings.Contains(r.body, `"error"`) {
		t.Fatalf("HTTP, a matching header: %d %s", r.status, r.body)
	}
	check("HTTP")
	headers["Mcp-Param-Region"] = "us-1"
	if r := post(t, srv.URL, body, headers); r.status != 400 || !strings.Contains(r.body, "-32020") {
		t.Fatalf("HTTP, a header that does not match: %d %s", r.status, r.body)
	}
}
