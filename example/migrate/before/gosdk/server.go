// Package gosdk is the tool set as it was on the official go-sdk, before
// the move: typed tools (mcp.AddTool), whose schemas the SDK infers from
// the argument structs (the jsonschema tag is a description there).
package gosdk

import (
	"context"
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
	return s
}
