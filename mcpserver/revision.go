package mcpserver

import (
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver/internal/front"
)

// revision is the MCP revision a call was made at. What differs by
// revision in how a call is answered is decided by its methods.
type revision string

// revisionOf is req's revision: its own (_meta, 2026-07-28), else the one
// its session negotiated, else its HTTP header's; "" when none says.
func revisionOf(req *mcp.CallToolRequest) revision {
	if v, ok := req.Params.Meta[mcp.MetaKeyProtocolVersion].(string); ok {
		return revision(v)
	}
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil {
			// As the SDK negotiates: the client's, when the server speaks
			// it, else the last revision with initialize.
			if slices.Contains(mcp.SupportedProtocolVersions(), p.ProtocolVersion) && p.ProtocolVersion < front.SessionlessRevision {
				return revision(p.ProtocolVersion)
			}
			return "2025-11-25"
		}
	}
	if req.Extra != nil && req.Extra.Header != nil {
		return revision(req.Extra.Header.Get("Mcp-Protocol-Version"))
	}
	return ""
}

// elicits: the revision has elicitation/create (2025-06-18 on). A client
// of an earlier one is never sent it, whatever it declares.
func (r revision) elicits() bool { return r == "" || r >= "2025-06-18" }

// elicitsURL: the revision has URL-mode elicitation and its error
// (2025-11-25 only: 2026-07-28 reads the address in the result).
func (r revision) elicitsURL() bool {
	return r == "" || (r >= "2025-11-25" && r < front.SessionlessRevision)
}
