package eino_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	keeleino "github.com/keelgen/keel/adapters/eino"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest/doortest"
)

// The corpus through eino's own ToolsNode: it lists only what the caller
// may call, and every call, the hidden and the scoped-out tool's too, is
// keel's answer, audited under the tool call's id.
func TestDoorToolsNode(t *testing.T) {
	f, err := doortest.New()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	caller := func(context.Context) runtime.ExecutionContext { return doortest.Caller() }
	cfg, err := keeleino.NodeConfig(ctx, f.Exec, keeleino.Options{Context: caller})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tool := range cfg.Tools {
		info, err := tool.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, info.Name)
	}
	if err := doortest.CheckListed(listed); err != nil {
		t.Error(err)
	}
	node, err := compose.NewToolNode(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cases := doortest.Calls()
	var calls []schema.ToolCall
	for i, c := range cases {
		calls = append(calls, schema.ToolCall{ID: fmt.Sprint("eino-", i), Type: "function", Function: schema.FunctionCall{Name: c.Tool, Arguments: c.Arguments}})
	}
	out, err := node.Invoke(ctx, &schema.Message{Role: schema.Assistant, ToolCalls: calls})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range out {
		got[m.ToolCallID] = m.Content
	}
	for i, c := range cases {
		id := fmt.Sprint("eino-", i)
		if err := doortest.CheckResultJSON(c, got[id]); err != nil {
			t.Error(err)
		}
		if !f.Audited(id) {
			t.Errorf("%s: not audited", c.Name)
		}
	}
	if f.Runs() != 1 {
		t.Errorf("%d handler runs, want 1 (the valid call)", f.Runs())
	}
	t.Logf("eino: %d calls", len(cases))
}
