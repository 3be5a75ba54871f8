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

// A tool's icons and static _meta entries (//keel:icon, //keel:meta) are
// in tools/list as MCP has them, beside its groups, over stdio framing and
// HTTP; the model's text (the description) carries neither.
func TestIconsAndMetaOverMCP(t *testing.T) {
	info := runtime.ToolInfo{Name: "issue_write", Version: "1", Effect: runtime.EffectRead, Description: "Writes an issue.", Groups: []string{"issues"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`),
		Icons: []runtime.Icon{{Src: "https://example.com/issue.svg", MIMEType: "image/svg+xml", Sizes: []string{"any"}},
			{Src: "https://example.com/issue-dark.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: "dark"}},
		Meta: map[string]json.RawMessage{"ui": json.RawMessage(`{"resourceUri":"ui://issues/write"}`)}}
	exec, err := runtime.NewExecutor(keeltest.Of(runtime.NewTool(info, runtime.Handle(func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }))),
		runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for name, cs := range transports(t, mcpserver.New(exec, mcpserver.Options{}), "c") {
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil || len(list.Tools) != 1 {
			t.Fatalf("%s: %v %+v", name, err, list)
		}
		tool := list.Tools[0]
		icons, _ := json.Marshal(tool.Icons)
		if string(icons) != `[{"src":"https://example.com/issue.svg","mimeType":"image/svg+xml","sizes":["any"]},{"src":"https://example.com/issue-dark.png","mimeType":"image/png","sizes":["48x48"],"theme":"dark"}]` {
			t.Errorf("%s: icons %s", name, icons)
		}
		meta, _ := json.Marshal(tool.Meta)
		if string(meta) != `{"io.keelgen/groups":["issues"],"ui":{"resourceUri":"ui://issues/write"}}` {
			t.Errorf("%s: _meta %s", name, meta)
		}
		if tool.Description != "Writes an issue." {
			t.Errorf("%s: description %q", name, tool.Description)
		}
	}
}
