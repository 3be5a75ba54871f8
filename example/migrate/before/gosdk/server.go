// Package gosdk is the tool set as it was on the official go-sdk, before
// the move: typed tools (mcp.AddTool), whose schemas the SDK infers from
// the argument structs (the jsonschema tag is a description there).
package gosdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/example/migrate/dashboards"
)

type searchArgs struct {
	Query string `json:"query" jsonschema:"part of a title, in any case"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many come back (1 to 100; all when absent)"`
}

type searchResult struct {
	Dashboards []dashboards.Dashboard `json:"dashboards"`
}

type annotationArgs struct {
	DashboardUID string `json:"dashboard_uid" jsonschema:"the dashboard"`
	Text         string `json:"text" jsonschema:"the note"`
}

type annotation struct {
	DashboardUID string `json:"dashboard_uid"`
	Count        int    `json:"count"`
}

// New returns the server.
func New() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "dashboards-gosdk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "search_dashboards", Description: "Finds dashboards by title.",
		Icons: []mcp.Icon{{Source: "https://grafana.example/icons/search.svg", MIMEType: "image/svg+xml", Sizes: []string{"any"}}}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in searchArgs) (*mcp.CallToolResult, searchResult, error) {
			found := dashboards.Find(in.Query, in.Limit)
			// The text a client shows is a sentence; the data is structuredContent.
			text := &mcp.TextContent{Text: fmt.Sprintf("%d dashboards match.", len(found))}
			return &mcp.CallToolResult{Content: []mcp.Content{text}}, searchResult{Dashboards: found}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "create_annotation", Description: "Adds a note to a dashboard.",
		Icons: []mcp.Icon{{Source: "https://grafana.example/icons/note.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: "dark"}},
		Meta:  mcp.Meta{"ui": map[string]any{"resourceUri": "ui://dashboards/annotate"}}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in annotationArgs) (*mcp.CallToolResult, annotation, error) {
			n, ok := dashboards.Annotate(in.DashboardUID, in.Text)
			if !ok {
				return nil, annotation{}, errors.New("no dashboard has this uid")
			}
			return nil, annotation{DashboardUID: in.DashboardUID, Count: n}, nil
		})
	addRawTools(s)
	return s
}

// addRawTools adds the tools written as raw AddTool, as github-mcp-server
// writes its own: each schema written out, the arguments read by hand.
func addRawTools(s *mcp.Server) {
	// A null folder (to the root) is told apart from none (stay).
	s.AddTool(&mcp.Tool{Name: "file_dashboard", Description: "Moves a dashboard into a folder, or out of every folder.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"uid":{"type":"string","description":"The dashboard."},` +
			`"folder":{"type":["string","null"],"description":"The folder to move it to; null moves it to the root, absent leaves it where it is."}},` +
			`"required":["uid"]}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				UID    string          `json:"uid"`
				Folder json.RawMessage `json:"folder"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			var folder string
			toRoot := string(in.Folder) == "null"
			if len(in.Folder) > 0 && !toRoot {
				if err := json.Unmarshal(in.Folder, &folder); err != nil {
					return nil, err
				}
			}
			d, ok := dashboards.File(in.UID, folder, toRoot)
			if !ok {
				return nil, errors.New("no dashboard has this uid")
			}
			out, _ := json.Marshal(d)
			return &mcp.CallToolResult{StructuredContent: json.RawMessage(out), Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "set_variable", Description: "Sets a dashboard variable to text, a number or a flag.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"uid":{"type":"string","description":"The dashboard."},` +
			`"name":{"type":"string","description":"The variable's name."},` +
			`"value":{"type":["string","number","boolean"],"description":"Its new value."}},` +
			`"required":["uid","name","value"]}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				UID   string `json:"uid"`
				Name  string `json:"name"`
				Value any    `json:"value"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			switch in.Value.(type) {
			case string, float64, bool:
			default:
				return nil, errors.New("value must be a string, a number or a boolean")
			}
			if !dashboards.SetVariable(in.UID, in.Name, in.Value) {
				return nil, errors.New("no dashboard has this uid")
			}
			out, _ := json.Marshal(in)
			return &mcp.CallToolResult{StructuredContent: json.RawMessage(out), Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
		})
}
