package eino_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	keeleino "github.com/keelgen/keel/adapters/eino"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

// eino's own ToolsNode runs an assistant message's tool calls through keel:
// the valid lookup's output is keel's result; invalid arguments (a member
// named twice, which a decoded value would hide) and a hallucinated tool
// come back with keel's stable codes as tool messages, never as errors; each
// answers its tool call by id, and keel's call id is the tool call's.
func TestToolsNodeRunsKeelTools(t *testing.T) {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := keeleino.NodeConfig(context.Background(), exec, keeleino.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	info, err := cfg.Tools[1].Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	js, err := info.ParamsOneOf.ToJSONSchema()
	if err != nil || info.Name != generated.ToolLookupIncident || js.Properties.Len() != 1 {
		t.Fatalf("tool info %+v, %v", info, err)
	}
	node, err := compose.NewToolNode(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	call := func(id, name, args string) schema.ToolCall {
		return schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: args}}
	}
	out, err := node.Invoke(ctx, &schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{
		call("call_1", generated.ToolLookupIncident, `{"incident_id":"INC-001"}`),
		call("call_2", generated.ToolLookupIncident, `{"incident_id":"INC-404","incident_id":"INC-001"}`),
		call("call_3", "delete_prod", `{}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range out {
		got[m.ToolCallID] = m.Content
	}
	for id, want := range map[string]string{
		"call_1": `{"call_id":"call_1","tool_name":"lookup_incident","tool_version":"1.1","ok":true,`,
		"call_2": `{"call_id":"call_2","tool_name":"lookup_incident","tool_version":"1.1","ok":false,"data":null,"error":{"code":"invalid_arguments"`,
		"call_3": `{"call_id":"call_3","tool_name":"delete_prod","tool_version":null,"ok":false,"data":null,"error":{"code":"unknown_tool"`,
	} {
		if !strings.HasPrefix(got[id], want) {
			t.Errorf("%s: %s\nwant %s...", id, got[id], want)
		}
	}
}
