package question

import (
	"encoding/json"
	"strings"
)

// A member the input schema marks writeOnly (JSON Schema's word for a
// value sent but never shown back: a password, a card number) is
// sensitive: the question shows that it is set, and its length, never its
// value.

// node is what the question reads of a subschema: whether it is
// sensitive, and where its members and items are described.
type node struct {
	writeOnly  bool
	properties map[string]*node
	items      *node
	ref        string
	root       *node // for $ref: the document's root, which holds $defs
	defs       map[string]*node
}

// maxSchemaDepth bounds the walk of a schema the question reads.
const maxSchemaDepth = 64

// parseNode reads a schema document; nil when it does not read (nothing
// is then sensitive).
func parseNode(doc []byte) *node {
	if len(doc) == 0 {
		return nil
	}
	return readNode(doc, nil, 0)
}

func readNode(doc []byte, root *node, depth int) *node {
	var m map[string]json.RawMessage
	if depth > maxSchemaDepth || json.Unmarshal(doc, &m) != nil {
		return nil
	}
	n := &node{root: root}
	if root == nil {
		n.root = n
	}
	json.Unmarshal(m["writeOnly"], &n.writeOnly)
	json.Unmarshal(m["$ref"], &n.ref)
	var props map[string]json.RawMessage
	if json.Unmarshal(m["properties"], &props) == nil {
		n.properties = map[string]*node{}
		for name, p := range props {
			n.properties[name] = readNode(p, n.root, depth+1)
		}
	}
	if items, ok := m["items"]; ok {
		n.items = readNode(items, n.root, depth+1)
	}
	var defs map[string]json.RawMessage
	if json.Unmarshal(m["$defs"], &defs) == nil {
		n.defs = map[string]*node{}
		for name, d := range defs {
			n.defs[name] = readNode(d, n.root, depth+1)
		}
	}
	return n
}

// resolved follows n's $ref within its document (#/$defs/Name); a
// reference marked writeOnly makes what it names sensitive.
func (n *node) resolved() *node {
	sensitive := false
	for range maxSchemaDepth {
		if n == nil {
			return nil
		}
		sensitive = sensitive || n.writeOnly
		name, ok := strings.CutPrefix(n.ref, "#/$defs/")
		if !ok || n.root == nil {
			break
		}
		n = n.root.defs[name]
	}
	if n != nil && sensitive && !n.writeOnly {
		c := *n
		c.writeOnly = true
		return &c
	}
	return n
}

// member is the subschema of n's member name; nil when n says nothing.
func (n *node) member(name string) *node {
	if n = n.resolved(); n == nil {
		return nil
	}
	return n.properties[name].resolved()
}

// item is the subschema of n's items.
func (n *node) item() *node {
	if n = n.resolved(); n == nil {
		return nil
	}
	return n.items.resolved()
}

// sensitive reports whether n is marked writeOnly.
func (n *node) sensitive() bool { return n != nil && n.writeOnly }
