package runtime_test

import (
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// A server's operator picks groups at start: the tools of the groups it
// enables are listed and run; the others, those of a group it leaves out,
// and writes under read-only are absent (not listed, unknown_tool when
// called, with the message an absent name gets), and none of them runs.
func TestToolGroupsOfferOnlyTheirTools(t *testing.T) {
	var ran atomic.Int32
	tool := func(name string, effect runtime.Effect, groups ...string) *runtime.Tool {
		return runtime.NewTool(runtime.ToolInfo{Name: name, Version: "1", Effect: effect, Description: name, Groups: groups,
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
			runtime.Handle(func(context.Context, struct{}) (struct{}, error) { ran.Add(1); return struct{}{}, nil }))
	}
	set := keeltest.Of(
		tool("get_dashboard", runtime.EffectRead, "dashboards"),
		tool("update_dashboard", runtime.EffectWrite, "dashboards"),
		tool("list_alerts", runtime.EffectRead, "alerts"),
		tool("delete_datasource", runtime.EffectWrite, "admin", "datasources"),
		tool("whoami", runtime.EffectRead),
	)
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		ts      runtime.ToolGroups
		offered string
	}{
		{"every tool", runtime.ToolGroups{}, "delete_datasource,get_dashboard,list_alerts,update_dashboard,whoami"},
		{"one group", runtime.ToolGroups{Only: []string{"dashboards"}}, "get_dashboard,update_dashboard"},
		{"two groups", runtime.ToolGroups{Only: []string{"dashboards", "datasources"}}, "delete_datasource,get_dashboard,update_dashboard"},
		{"without a group", runtime.ToolGroups{Without: []string{"admin"}}, "get_dashboard,list_alerts,update_dashboard,whoami"},
		{"read-only", runtime.ToolGroups{ReadOnly: true}, "get_dashboard,list_alerts,whoami"},
		{"a group, read-only", runtime.ToolGroups{Only: []string{"dashboards"}, ReadOnly: true}, "get_dashboard"},
	} {
		t.Run(c.name, func(t *testing.T) {
			exec, err := runtime.NewExecutor(set, runtime.WithToolGroups(c.ts), runtime.WithLogger(slog.New(slog.DiscardHandler)),
				runtime.WithPolicy(runtime.PolicyFunc(func(context.Context, runtime.PolicyRequest) runtime.Decision { return runtime.Decision{Allow: true} })))
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, m := range exec.ModelToolsFor(ctx, runtime.ExecutionContext{}) {
				listed = append(listed, m.Name)
			}
			if got := strings.Join(listed, ","); got != c.offered {
				t.Errorf("listed %s, want %s", got, c.offered)
			}
			absent := exec.Execute(ctx, runtime.ExecutionContext{}, runtime.ToolCall{ID: "a", Name: "no_such_tool", Arguments: json.RawMessage(`{}`)})
			ran.Store(0)
			for _, tl := range set.Tools() {
				name := tl.Info().Name
				r := exec.Execute(ctx, runtime.ExecutionContext{}, runtime.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(`{}`)})
				offered := strings.Contains(","+c.offered+",", ","+name+",")
				switch {
				case offered && !r.OK:
					t.Errorf("%s is offered but refused: %+v", name, r.Error)
				case !offered && (r.Code() != runtime.CodeUnknownTool || r.Error.Message != absent.Error.Message):
					t.Errorf("%s is left out but answered %+v, not as an absent name is (%+v)", name, r.Error, absent.Error)
				}
			}
			if want := int32(len(listed)); ran.Load() != want {
				t.Errorf("%d handlers ran, want the %d offered", ran.Load(), want)
			}
		})
	}
	for _, c := range []struct {
		ts   runtime.ToolGroups
		want string
	}{
		{runtime.ToolGroups{Only: []string{"dashbaords"}}, `no tool of the set is in group "dashbaords" (its groups: admin, alerts, dashboards, datasources)`},
		{runtime.ToolGroups{Without: []string{"Admin"}}, `"Admin" is not a group name`},
	} {
		if _, err := runtime.NewExecutor(set, runtime.WithToolGroups(c.ts)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error saying %s", c.ts, err, c.want)
		}
	}
}

// The flags a server's main passes through set the tool groups.
func TestToolGroupsFlags(t *testing.T) {
	var ts runtime.ToolGroups
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	ts.Flags(fs)
	if err := fs.Parse([]string{"-groups", "dashboards, alerts", "-groups", "search", "-without-groups", "admin", "-read-only"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ts.Only, ",") + "|" + strings.Join(ts.Without, ","); got != "dashboards,alerts,search|admin" || !ts.ReadOnly {
		t.Errorf("parsed %+v", ts)
	}
}
