package cedarpolicy

import (
	"fmt"
	"testing"
)

// A schema is read once and shared; one that does not read is nil (numbers
// by value alone); the cache stops growing at its bound.
func TestSchemaCache(t *testing.T) {
	var c schemaCache
	doc := []byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	first := c.get(doc)
	if first == nil || first.Property("n") == nil || c.get(doc) != first {
		t.Fatal("the schema was not read once and shared")
	}
	if c.get([]byte(`{"type":`)) != nil {
		t.Error("a schema that does not parse was read")
	}
	for i := range maxCachedSchemas + 10 {
		if c.get(fmt.Appendf(nil, `{"title":"%d"}`, i)) == nil {
			t.Fatal("a schema past the bound was not read")
		}
	}
	if len(c.m) != maxCachedSchemas {
		t.Errorf("the cache holds %d schemas, bound %d", len(c.m), maxCachedSchemas)
	}
}
