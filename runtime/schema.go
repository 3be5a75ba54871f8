package runtime

import (
	"bytes"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
	_, err := compileSchema("check", doc)
	return err
}

// compileSchema compiles one generated schema under a private URL.
func compileSchema(name string, doc []byte) (*jsonschema.Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	url := "keel:///" + name + ".json"
	if err := c.AddResource(url, v); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return s, nil
}
