// Package mcpgo is the tool set as it was on mark3labs/mcp-go, before the
// move: tools declared member by member, arguments bound by hand.
package mcpgo

import (
	"context"
	"encoding/json"

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
			// GetInt takes "5" for 5, as models send it.
			found := dashboards.Find(req.GetString("query", ""), req.GetInt("limit", 0))
			return mcp.NewToolResultJSON(map[string]any{"dashboards": found})
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
	s.AddTool(mcp.NewToolWithRawSchema("file_dashboard", "Moves a dashboard into a folder, or out of every folder.", json.RawMessage(`{"type":"object","properties":{`+
		`"uid":{"type":"string","description":"The dashboard."},`+
		`"folder":{"type":["string","null"],"description":"The folder to move it to; null moves it to the root, absent leaves it where it is."}},`+
		`"required":["uid"]}`)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := req.GetArguments()
			folder, _ := args["folder"].(string)
			v, given := args["folder"]
			d, ok := dashboards.File(req.GetString("uid", ""), folder, given && v == nil)
			if !ok {
				return mcp.NewToolResultError("no dashboard has this uid"), nil
			}
			return mcp.NewToolResultJSON(d)
		})
	s.AddTool(mcp.NewToolWithRawSchema("set_variable", "Sets a dashboard variable to text, a number or a flag.", json.RawMessage(`{"type":"object","properties":{`+
		`"uid":{"type":"string","description":"The dashboard."},`+
		`"name":{"type":"string","description":"The variable's name."},`+
		`"value":{"type":["string","number","boolean"],"description":"Its new value."}},`+
		`"required":["uid","name","value"]}`)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			uid, name, value := req.GetString("uid", ""), req.GetString("name", ""), req.GetArguments()["value"]
			if !dashboards.SetVariable(uid, name, value) {
				return mcp.NewToolResultError("no dashboard has this uid"), nil
			}
			return mcp.NewToolResultJSON(map[string]any{"uid": uid, "name": name, "value": value})
		})
	return s
}
