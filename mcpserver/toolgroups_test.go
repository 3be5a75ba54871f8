package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// A server started with tool groups lists only its groups' tools, each with
// its groups in _meta; a call to a tool it leaves out is answered as one
// to a name the set lacks, over stdio framing and HTTP, and its handler never runs.
func TestToolGroupsOverMCP(t *testing.T) {
	ran := map[string]int{}
	tool := func(name string, groups ...string) *runtime.Tool {
		return runtime.NewTool(runtime.ToolInfo{Name: name, Version: "1", Effect: runtime.EffectRead, Description: name, Groups: groups,
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
			runtime.Handle(func(context.Context, struct{}) (struct{}, error) { ran[name]++; return struct{}{}, nil }))
	}
	exec, err := runtime.NewExecutor(keeltest.Of(tool("list_alerts", "alerts"), tool("get_dashboard", "dashboards")),
		runtime.WithToolGroups(runtime.ToolGroups{Only: []string{"alerts"}}), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for name, cs := range transports(t, mcpserver.New(exec, mcpserver.Options{}), "c") {
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Tools) != 1 || list.Tools[0].Name != "list_alerts" {
			t.Fatalf("%s: listed %+v", name, list.Tools)
		}
		if groups, _ := list.Tools[0].Meta[mcpserver.GroupsMetaKey].([]any); !slices.Equal(groups, []any{"alerts"}) {
			t.Errorf("%s: _meta %v", name, list.Tools[0].Meta)
		}
		_, leftOut := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_dashboard", Arguments: map[string]any{}})
		_, absent := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_prod", Arguments: map[string]any{}})
		var rpcErr *jsonrpc.Error
		if !errors.As(leftOut, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || absent == nil || leftOut.Error() != absent.Error() {
			t.Errorf("%s: a left-out tool answered %v; an absent one %v", name, leftOut, absent)
		}
		if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_alerts", Arguments: map[string]any{}}); err != nil || res.IsError {
			t.Errorf("%s: an offered tool: %v %+v", name, err, res)
		}
	}
	if ran["get_dashboard"] != 0 || ran["list_alerts"] != 2 {
		t.Errorf("handlers ran %v", ran)
	}
}
