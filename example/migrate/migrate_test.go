// The move of a small go-sdk server and a small mcp-go server to keel,
// checked as a migrating team would: the same tools listed, each member
// required or optional as before, the same answers to the same calls, and
// what keel adds (bounds stated, unknown members refused, writes gated).
package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/example/migrate/before/gosdk"
	"github.com/keelgen/keel/example/migrate/before/mcpgo"
	"github.com/keelgen/keel/example/migrate/dashboards"
	"github.com/keelgen/keel/example/migrate/dashboards/generated"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
)

// servers are the three, each over Streamable HTTP, as a client meets
// them: before (go-sdk, mcp-go) and after (keel).
func servers(t *testing.T) map[string]string {
	t.Helper()
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithErrorDetails())
	if err != nil {
		t.Fatal(err)
	}
	keel, err := mcpserver.HTTPHandler(mcpserver.New(exec, mcpserver.Options{
		// The team's harness decided writes may run for this caller, as
		// they did before the move (the default asks for approval).
		Context: func(context.Context, *mcp.CallToolRequest) runtime.ExecutionContext {
			return runtime.ExecutionContext{Principal: "team", AllowSideEffects: true}
		},
	}), mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	sdk := gosdk.New()
	urls := map[string]string{}
	for name, h := range map[string]http.Handler{
		"go-sdk": mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdk }, nil),
		"mcp-go": mcpgoserver.NewStreamableHTTPServer(mcpgo.New()),
		"keel":   keel,
	} {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		urls[name] = srv.URL
	}
	return urls
}

func connect(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "migrating", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// shape is what a tools/list says of a tool: its description, and its
// arguments.
type shape struct {
	Description string `json:"-"`
	Icons, Meta string `json:"-"` // as MCP lists them, JSON
	Properties  map[string]map[string]any
	Required    []string
}

func shapes(t *testing.T, cs *mcp.ClientSession) map[string]shape {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]shape{}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var s shape
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		slices.Sort(s.Required)
		s.Description = tool.Description
		icons, _ := json.Marshal(tool.Icons)
		meta, _ := json.Marshal(tool.Meta)
		s.Icons, s.Meta = string(icons), string(meta)
		out[tool.Name] = s
	}
	return out
}

// jsonTypes are a member schema's JSON types, in order: its "type" (one
// or a list), or those of an anyOf whose every alternative is a type alone.
func jsonTypes(p map[string]any) []string {
	switch t := p["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, v := range t {
			s, _ := v.(string)
			out = append(out, s)
		}
		return out
	}
	alts, _ := p["anyOf"].([]any)
	var out []string
	for _, a := range alts {
		m, _ := a.(map[string]any)
		s, ok := m["type"].(string)
		if !ok || len(m) != 1 {
			return nil
		}
		out = append(out, s)
	}
	return out
}

func TestMovedServersAnswerAlike(t *testing.T) {
	urls := servers(t)
	sessions := map[string]*mcp.ClientSession{}
	listed := map[string]map[string]shape{}
	for name, url := range urls {
		sessions[name] = connect(t, url)
		listed[name] = shapes(t, sessions[name])
	}
	// The same tools, each member where it was, required as before.
	for _, before := range []string{"go-sdk", "mcp-go"} {
		if len(listed[before]) != len(listed["keel"]) {
			t.Fatalf("%s lists %d tools, keel %d", before, len(listed[before]), len(listed["keel"]))
		}
		for name, old := range listed[before] {
			now, ok := listed["keel"][name]
			if !ok {
				t.Fatalf("keel does not list %s", name)
			}
			if !slices.Equal(old.Required, now.Required) {
				t.Errorf("%s: required %v on %s, %v on keel", name, old.Required, before, now.Required)
			}
			if !slices.Equal(mapsKeys(old.Properties), mapsKeys(now.Properties)) {
				t.Errorf("%s: members %v on %s, %v on keel", name, mapsKeys(old.Properties), before, mapsKeys(now.Properties))
			}
			// The author's words, byte for byte: the tool's description as
			// both wrote it, each member's as mcp-go wrote it (the go-sdk's
			// tags hold the same words in lower case).
			// keel adds only the errors the tool declares.
			if rest, ok := strings.CutPrefix(now.Description, old.Description); !ok || rest != "" && !strings.HasPrefix(rest, " Errors it may return: ") {
				t.Errorf("%s: described %q on %s, %q on keel", name, old.Description, before, now.Description)
			}
			// Icons and _meta as the go-sdk server listed them.
			if before == "go-sdk" && (old.Icons != now.Icons || old.Meta != now.Meta) {
				t.Errorf("%s: icons %s and _meta %s on %s; %s and %s on keel", name, old.Icons, old.Meta, before, now.Icons, now.Meta)
			}
			for member, p := range old.Properties {
				// Each member's JSON types, null among them where null
				// means something (a wire.Nullable in keel). keel lists a
				// list of types as an anyOf of one type each, which the
				// go-sdk's client reads (docs/mcp.md).
				if fmt.Sprint(jsonTypes(p)) != fmt.Sprint(jsonTypes(now.Properties[member])) && (before == "go-sdk" || member == "folder" || member == "value") {
					t.Errorf("%s.%s: types %v on %s, %v on keel", name, member, jsonTypes(p), before, jsonTypes(now.Properties[member]))
				}
				if before == "mcp-go" && p["description"] != now.Properties[member]["description"] {
					t.Errorf("%s.%s: described %q on %s, %q on keel", name, member, p["description"], before, now.Properties[member]["description"])
				}
			}
		}
	}
	// What keel states that neither said: the bounds, in the schema.
	if limit := listed["keel"]["search_dashboards"].Properties["limit"]; limit["maximum"] != float64(100) || limit["type"] != "integer" {
		t.Errorf("keel's limit: %v", limit)
	}

	// The same answers to the same calls. A file_dashboard call starts
	// from db-pool in the folder "infra" on each server: null moves it to
	// the root, absent leaves it there.
	for _, call := range []struct{ tool, args string }{
		{"search_dashboards", `{"query":"api"}`},
		{"search_dashboards", `{"query":"API","limit":1}`},
		{"create_annotation", `{"dashboard_uid":"db-pool","text":"pool raised to 50"}`},
		{"file_dashboard", `{"uid":"db-pool","folder":"ops"}`},
		{"file_dashboard", `{"uid":"db-pool"}`},
		{"file_dashboard", `{"uid":"db-pool","folder":null}`},
		{"set_variable", `{"uid":"db-pool","name":"interval","value":"5m"}`},
		{"set_variable", `{"uid":"db-pool","name":"max","value":30}`},
		{"set_variable", `{"uid":"db-pool","name":"live","value":true}`},
	} {
		var answers, texts []string
		for _, name := range []string{"go-sdk", "mcp-go", "keel"} {
			dashboards.File("db-pool", "infra", false)
			res, err := sessions[name].CallTool(context.Background(), &mcp.CallToolParams{Name: call.tool, Arguments: json.RawMessage(call.args)})
			if err != nil || res.IsError {
				t.Fatalf("%s %s on %s: %v %+v", call.tool, call.args, name, err, res)
			}
			b, _ := json.Marshal(res.StructuredContent)
			answers = append(answers, normalize(t, b, call.tool))
			texts = append(texts, text(res))
		}
		// The text a client shows, as the go-sdk server wrote it: a
		// sentence where it wrote one (the result's MCPText in keel).
		if call.tool == "search_dashboards" && texts[0] != texts[2] {
			t.Errorf("%s %s: the go-sdk's text %q, keel's %q", call.tool, call.args, texts[0], texts[2])
		}
		if want := map[string]string{`{"uid":"db-pool"}`: `"folder":"infra"`, `{"uid":"db-pool","folder":null}`: `{"title":"Database pool","uid":"db-pool"}`}[call.args]; !strings.Contains(answers[2], want) {
			t.Errorf("%s %s: keel answered %s, want %s in it", call.tool, call.args, answers[2], want)
		}
		if answers[0] != answers[2] || answers[1] != answers[2] {
			t.Errorf("%s %s: go-sdk %s, mcp-go %s, keel %s", call.tool, call.args, answers[0], answers[1], answers[2])
		}
	}

	// A limit sent as text, as models send it: mcp-go's GetInt took "1",
	// and so does keel's search_dashboards, which says lax=numbers; a
	// limit of 1.5, which GetInt cut to 1, keel refuses.
	var lax []string
	for _, name := range []string{"mcp-go", "keel"} {
		res, err := sessions[name].CallTool(context.Background(), &mcp.CallToolParams{Name: "search_dashboards", Arguments: json.RawMessage(`{"query":"API","limit":"1"}`)})
		if err != nil || res.IsError {
			t.Fatalf("a limit of \"1\" on %s: %v %+v", name, err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		lax = append(lax, string(b))
	}
	if lax[0] != lax[1] || strings.Count(lax[1], `"uid"`) != 1 {
		t.Errorf(`a limit of "1": mcp-go %s, keel %s`, lax[0], lax[1])
	}

	// A null for an optional member whose type has no null: keel reads it
	// as absent, as it does for every shape (docs/executor.md), and so did
	// mcp-go's GetInt; the go-sdk's validator refuses it (docs/migrate.md
	// says so).
	absent, null := map[string]string{}, map[string]string{}
	for _, name := range []string{"go-sdk", "mcp-go", "keel"} {
		for args, into := range map[string]map[string]string{`{"query":"api"}`: absent, `{"query":"api","limit":null}`: null} {
			res, err := sessions[name].CallTool(context.Background(), &mcp.CallToolParams{Name: "search_dashboards", Arguments: json.RawMessage(args)})
			switch {
			case err != nil:
				into[name] = "error"
			case res.IsError:
				into[name] = "isError"
			default:
				b, _ := json.Marshal(res.StructuredContent)
				into[name] = string(b)
			}
		}
	}
	t.Logf("a null limit: %v; none: %v", null, absent)
	if null["keel"] != absent["keel"] || null["mcp-go"] != null["keel"] || null["go-sdk"] != "isError" {
		t.Errorf("a null limit: go-sdk %s, keel %s; without one: go-sdk %s, keel %s", null["go-sdk"], null["keel"], absent["go-sdk"], absent["keel"])
	}

	// What keel refuses that the peers ran or answered loosely: a member
	// misspelled (with what to send instead), a bound crossed.
	for _, bad := range []struct{ tool, args, want string }{
		{"search_dashboards", `{"query":"api","limitt":1}`, `"unknown":["limitt"]`},
		{"search_dashboards", `{"query":"api","limit":1000}`, `"keyword":"maximum","schema":100`},
		{"search_dashboards", `{"query":"api","limit":1.5}`, `"keyword":"type"`},
		// mcp-go stored an object as the variable's value.
		{"set_variable", `{"uid":"db-pool","name":"x","value":{"a":1}}`, `"pointer":"/value","keyword":"type"`},
	} {
		res, err := sessions["keel"].CallTool(context.Background(), &mcp.CallToolParams{Name: bad.tool, Arguments: json.RawMessage(bad.args)})
		if err != nil || !res.IsError || !strings.Contains(text(res), "invalid_arguments") || !strings.Contains(text(res), bad.want) {
			t.Errorf("%s on keel: %v %s", bad.args, err, text(res))
		}
	}
}

// normalize drops what differs by design: the annotation count, which each
// server's call adds to.
func normalize(t *testing.T, b []byte, tool string) string {
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if tool == "create_annotation" {
		delete(v, "count")
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func text(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func mapsKeys(m map[string]map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

// During the move one endpoint serves both: the tools moved so far through
// keel, the rest through the SDK's handlers as before (Options.Unmigrated).
func TestOneServerDuringTheMove(t *testing.T) {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	s := mcpserver.New(exec, mcpserver.Options{Unmigrated: []string{"list_folders"}})
	type folders struct {
		Folders []string `json:"folders"`
	}
	mcp.AddTool(s.SDK(), &mcp.Tool{Name: "list_folders", Description: "Lists the folders (not moved yet)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in struct {
			Prefix string `json:"prefix,omitempty"`
		}) (*mcp.CallToolResult, folders, error) {
			return nil, folders{Folders: []string{in.Prefix + "ops", in.Prefix + "dev"}}, nil
		})
	h, err := mcpserver.HTTPHandler(s, mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cs := connect(t, srv.URL)
	listed := shapes(t, cs)
	for _, name := range []string{"search_dashboards", "create_annotation", "list_folders"} {
		if _, ok := listed[name]; !ok {
			t.Errorf("%s is not listed: %v", name, listed)
		}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_folders", Arguments: map[string]any{"prefix": "team-"}})
	if err != nil || res.IsError || !strings.Contains(text(res), "team-ops") {
		t.Fatalf("the unmigrated tool: %v %s", err, text(res))
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_dashboards", Arguments: map[string]any{"query": "pool"}})
	if err != nil || res.IsError || text(res) != "1 dashboards match." || !strings.Contains(fmt.Sprint(res.StructuredContent), "db-pool") {
		t.Fatalf("the moved tool: %v %s %v", err, text(res), res.StructuredContent)
	}
}
