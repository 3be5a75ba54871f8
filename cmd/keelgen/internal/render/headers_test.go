package render

import (
	"strings"
	"testing"
)

// x-mcp-header is read on a property of the arguments reached through
// properties, of a primitive type, as an HTTP token unique in the tool
// (any case); anywhere else, or otherwise, it is refused with where.
func TestMCPHeaderDeclarations(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want string // "" accepted
	}{
		{`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}`, ""},
		{`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"boolean","x-mcp-header":"B"}}}}}`, ""},
		{`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Re gion"}}}`, "/region: x-mcp-header must name an HTTP header"},
		{`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":7}}}`, "/region: x-mcp-header must name an HTTP header"},
		{`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":""}}}`, "/region: x-mcp-header must name an HTTP header"},
		{`{"type":"object","properties":{"tags":{"type":"array","x-mcp-header":"Tags"}}}`, "/tags: x-mcp-header is only for an argument of type string"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Zone"},"b":{"type":"string","x-mcp-header":"zone"}}}`, `/b: x-mcp-header "zone" is also the header of /a`},
	} {
		g := planner()
		g.checkHeaders(mustNode(t, tc.doc))
		var got []string
		for _, d := range g.diags {
			got = append(got, d.Message)
		}
		all := strings.Join(got, "\n")
		if tc.want == "" && all != "" || tc.want != "" && !strings.Contains(all, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.doc, all, tc.want)
		}
	}
	// Under items, where no client looks for it, checkKeywords refuses it.
	g := planner()
	root := mustNode(t, `{"type":"object","properties":{"list":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}}}}`)
	g.checkHeaders(root)
	g.checkKeywords(root.Properties[0].Schema.Items, "/list/0")
	if len(g.diags) != 1 || !strings.Contains(g.diags[0].Message, "only for a property of the arguments") {
		t.Errorf("x-mcp-header under items: %+v", g.diags)
	}
}
