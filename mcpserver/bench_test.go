package mcpserver_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/example"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
)

func connect(b *testing.B, s *mcp.Server) *mcp.ClientSession {
	b.Helper()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.Connect(context.Background(), st, nil); err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func benchCall(b *testing.B, cs *mcp.ClientSession) {
	params := &mcp.CallToolParams{Name: generated.ToolLookupIncident, Arguments: map[string]any{"incident_id": "INC-001"}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkCallKeel: tools/call round trips through keel's MCP server (its
// executor: strict parse, keel's schema, policy, deadline, output schema).
// Compare with BenchmarkCallSDKTyped in the same run.
func BenchmarkCallKeel(b *testing.B) {
	benchCall(b, connect(b, mcpserver.New(generated.ToolSet, quietExecutor(b, generated.ToolSet), mcpserver.Options{})))
}

// sdkArgs and sdkIncident have the example's JSON shape without its
// invopop tags, which the SDK's schema inference reads differently.
type sdkArgs struct {
	IncidentID string `json:"incident_id"`
}

type sdkIncident struct {
	IncidentID string   `json:"incident_id"`
	Service    string   `json:"service"`
	Severity   string   `json:"severity"`
	Symptom    string   `json:"symptom"`
	Evidence   []string `json:"evidence"`
}

// BenchmarkCallSDKTyped: the same tool registered with the go-sdk's own
// typed mcp.AddTool (its schema inference, reflection and validation of
// input and output), same in-memory transport.
func BenchmarkCallSDKTyped(b *testing.B) {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: generated.ToolLookupIncident, Description: "Look up an incident."},
		func(ctx context.Context, _ *mcp.CallToolRequest, args sdkArgs) (*mcp.CallToolResult, sdkIncident, error) {
			inc, err := example.LookupIncident(ctx, example.LookupIncidentArgs{IncidentID: example.IncidentID(args.IncidentID)})
			return nil, sdkIncident{string(inc.IncidentID), inc.Service, inc.Severity, inc.Symptom, inc.Evidence}, err
		})
	benchCall(b, connect(b, s))
}
