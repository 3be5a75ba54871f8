package runtime

import (
	"bytes"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/keelgen/keel/internal/schemamodel"
)

// noLoader refuses every URL: a schema can reach no file and no network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("keel: schema loading is disabled (%s)", url)
}

// CheckSchema reports whether doc compiles as the executor compiles a
// tool's schema (JSON Schema 2020-12, formats asserted, nothing loaded).
// keelgen runs it on every schema it writes.
func CheckSchema(doc []byte) error {
	_, _, err := compileSchema("check", doc)
	return err
}

// compileSchema compiles one generated schema under a private URL, and
// returns it with its typed reading, which the null and detail walks follow.
func compileSchema(name string, doc []byte) (*jsonschema.Schema, *schemamodel.Schema, error) {
	typed, err := schemamodel.Parse(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("schema %s: %w", name, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	url := "keel:///" + name + ".json"
	if err := c.AddResource(url, v); err != nil {
		return nil, nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return s, typed, nil
}
