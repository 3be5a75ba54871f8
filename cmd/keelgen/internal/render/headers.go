package render

import (
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// mcpHeader is SEP-2243's keyword for an argument that an MCP client over
// Streamable HTTP mirrors into a header (Mcp-Param-<name>), so that a
// deployment routes on it without reading the body. Generated code does not
// check it: the MCP server checks that the header matches the argument
// (-32020 when it does not), and a change to it is major (every client must
// send the header).
const mcpHeader = "x-mcp-header"

// checkHeaders reads the x-mcp-header declarations of a tool's arguments:
// on properties reached from the root through properties alone (where a
// client looks for them), of one primitive type, each a header name (an
// HTTP token) that no other property of the tool uses, in any case. It
// records the nodes that may carry one; checkKeywords refuses it
// elsewhere.
func (g *codecs) checkHeaders(root node) {
	if g.headerNodes == nil {
		g.headerNodes = map[node]bool{}
	}
	seen := map[string]string{}
	var walk func(n node, ptr string)
	walk = func(n node, ptr string) {
		for _, p := range n.Properties {
			at := ptr + "/" + p.Name
			if raw, ok := p.Schema.OtherValue(mcpHeader); ok {
				g.headerNodes[p.Schema] = true
				name, valid := headerName(raw)
				switch {
				case !valid:
					g.fail(at, "x-mcp-header must name an HTTP header: a token of letters, digits and !#$%%&'*+-.^_`|~, at most 64 bytes (got %s)", raw)
				case !primitive(p.Schema):
					g.fail(at, "x-mcp-header is only for an argument of type string, integer, number or boolean")
				case seen[strings.ToLower(name)] != "":
					g.fail(at, "x-mcp-header %q is also the header of %s (header names ignore case)", name, seen[strings.ToLower(name)])
				default:
					seen[strings.ToLower(name)] = at
				}
			}
			walk(p.Schema, at)
		}
	}
	walk(root, "")
}

// headerName is an x-mcp-header's value, if it is a usable header name.
func headerName(raw jsontext.Value) (string, bool) {
	if raw.Kind() != '"' {
		return "", false
	}
	s, err := jsontext.AppendUnquote(nil, raw)
	if err != nil || len(s) == 0 || len(s) > 64 {
		return "", false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return "", false
		}
	}
	return string(s), true
}

// primitive reports whether n describes one JSON primitive type (or it
// or null).
func primitive(n node) bool {
	types := slices.DeleteFunc(slices.Clone(n.Type), func(t string) bool { return t == "null" })
	return len(types) == 1 && slices.Contains([]string{"string", "integer", "number", "boolean"}, types[0])
}
