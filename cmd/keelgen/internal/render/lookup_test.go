package render

import (
	"fmt"
	"go/token"
	"testing"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

// find follows a lookup plan as the generated Lookup does.
func find(n *lookupNode, name string) *model.Tool {
	for n.pos >= 0 {
		if n = n.next[name[n.pos]]; n == nil {
			return nil
		}
	}
	for _, r := range n.rows {
		if r.tool.Name == name {
			return r.tool
		}
	}
	return nil
}

// The narrowed Lookup reaches every tool by its exact name and by nothing
// else: names of 1,000 tools of mixed lengths, each with every byte
// changed, cut, extended.
func TestNarrowedLookupFindsExactNamesOnly(t *testing.T) {
	var tools []*model.Tool
	for i := range 1000 {
		name := fmt.Sprintf("incident_lookup_%d", i)
		if i%3 == 0 {
			name = fmt.Sprintf("t%d-get_item", i*7)
		}
		tools = append(tools, &model.Tool{Name: name, Pos: token.Position{Line: i}})
	}
	var rows []toolRow
	for i, tool := range tools {
		rows = append(rows, toolRow{tool: tool, index: i})
	}
	plans := map[int]*lookupNode{}
	for _, group := range byLength(rows) {
		plans[len(group[0].tool.Name)] = splitLookup(group, nil)
	}
	lookup := func(name string) *model.Tool {
		if p := plans[len(name)]; p != nil {
			return find(p, name)
		}
		return nil
	}
	maxLeaf := 0
	var leaves func(*lookupNode)
	leaves = func(n *lookupNode) {
		if n.pos < 0 {
			maxLeaf = max(maxLeaf, len(n.rows))
			return
		}
		for _, c := range n.next {
			leaves(c)
		}
	}
	for _, p := range plans {
		leaves(p)
	}
	if maxLeaf > leafSwitch {
		t.Errorf("a leaf compares %d names whole, more than %d", maxLeaf, leafSwitch)
	}
	for _, tool := range tools {
		name := tool.Name
		if got := lookup(name); got != tool {
			t.Fatalf("%s: found %v", name, got)
		}
		misses := []string{name + "0", name[1:], "x" + name, name[:len(name)-1], ""}
		for p := range len(name) {
			b := []byte(name)
			b[p] ^= 1
			misses = append(misses, string(b))
		}
		for _, miss := range misses {
			if got := lookup(miss); got != nil && got.Name != miss {
				t.Fatalf("%q found %s", miss, got.Name)
			}
		}
	}
}
