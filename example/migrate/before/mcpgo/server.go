// Package mcpgo is the tool set as it was on mark3labs/mcp-go, before the
// move: tools declared member by member, arguments bound by hand.
package mcpgo

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/keelgen/keel/example/migrate/dashboards"
)

// New returns the server.
func New() *server.MCPServer {
	s := server.NewMCPServer("dashboards-mcpgo", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("search_dashboards", mcp.WithDescription("Finds dashboards by title."),
		mcp.WithString("query", mcp.Required(), mcp.Description("Part of a title, in any case.")),
		mcp.WithNumber("limit", mcp.Description("How many come back (1 to 100; all when absent)."))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Query string `json:"query"`
				Limit int    `json:"limit"`
			}
			if err := req.BindArguments(&in); err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultJSON(map[string]any{"dashboards": dashboards.Find(in.Query, in.Limit)})
		})
	s.AddTool(mcp.NewTool("create_annotation", mcp.WithDescription("Adds a note to a dashboard."),
		mcp.WithString("dashboard_uid", mcp.Required(), mcp.Description("The dashboard.")),
		mcp.WithString("text", mcp.Required(), mcp.Description("The note."))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			uid, text := req.GetString("dashboard_uid", ""), req.GetString("text", "")
			n, ok := dashboards.Annotate(uid, text)
			if !ok {
				return mcp.NewToolResultError("no dashboard has this uid"), nil
			}
			return mcp.NewToolResultJSON(map[string]any{"dashboard_uid": uid, "count": n})
		})
	return s
}
