package mcpsuite_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/internal/testing/mcpsuite/generated"
	"github.com/keelgen/keel/mcpserver"
)

// Through the generated code and the MCP server, each content tool's
// result is its data's text, then its blocks in order, in MCP's shapes.
func TestContentToolsOverMCP(t *testing.T) {
	exec, err := generated.NewExecutor()
	if err != nil {
		t.Fatal(err)
	}
	s := mcpserver.New(exec, mcpserver.Options{})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	want := map[string][]string{
		generated.ToolTestImageContent:         {"text {}", "image image/png"},
		generated.ToolTestAudioContent:         {"text {}", "audio audio/wav"},
		generated.ToolTestEmbeddedResource:     {"text {}", "resource test://embedded-resource text/plain This is an embedded resource content."},
		generated.ToolTestMultipleContentTypes: {`text {"text":"Multiple content types test:"}`, "image image/png", `resource test://mixed-content-resource application/json {"test":"data","value":123}`},
	}
	for name, kinds := range want {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		var got []string
		for _, c := range res.Content {
			switch c := c.(type) {
			case *mcp.TextContent:
				got = append(got, "text "+c.Text)
			case *mcp.ImageContent:
				if len(c.Data) < 8 || string(c.Data[1:4]) != "PNG" {
					t.Errorf("%s: image data %q", name, c.Data)
				}
				got = append(got, "image "+c.MIMEType)
			case *mcp.AudioContent:
				if string(c.Data[:4]) != "RIFF" {
					t.Errorf("%s: audio data %q", name, c.Data)
				}
				got = append(got, "audio "+c.MIMEType)
			case *mcp.EmbeddedResource:
				got = append(got, "resource "+c.Resource.URI+" "+c.Resource.MIMEType+" "+c.Resource.Text)
			default:
				b, _ := json.Marshal(c)
				got = append(got, "other "+string(b))
			}
		}
		if len(got) != len(kinds) {
			t.Fatalf("%s: content %q, want %q", name, got, kinds)
		}
		for i := range got {
			if got[i] != kinds[i] {
				t.Errorf("%s: content %d is %q, want %q", name, i, got[i], kinds[i])
			}
		}
	}
}
