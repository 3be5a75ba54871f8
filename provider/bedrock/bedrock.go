// Package bedrock speaks AWS Bedrock's Converse tool format for a keel tool
// set, in aws-sdk-go-v2's own types: a ToolConfiguration of toolSpecs with
// keel's schemas, toolUse blocks in, toolResult blocks out. Unlike the other
// adapters it imports its SDK's types (bedrockruntime/types), since Converse
// documents are the SDK's to encode; a program that does not import this
// package does not link them.
package bedrock

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithydoc "github.com/aws/smithy-go/document"

	"github.com/keelgen/keel/internal/forms"
	"github.com/keelgen/keel/runtime"
)

// Options shape the definitions (ToolsFor) and the results.
type Options struct {
	// PlainSchemas writes each input schema in the plain form Amazon Nova
	// models take (the root may say only type, properties and required; a
	// member's other constraints move into its description, in words);
	// keelgen -targets bedrock lists what moves. The executor still
	// enforces keel's schema as generated.
	PlainSchemas bool

	// NoErrorStatus leaves status out of a failed toolResult: some models on
	// Bedrock refuse status "error" (Anthropic's take it). The result's JSON
	// says ok false and the stable code either way.
	NoErrorStatus bool
}

// Tools returns the Converse tool configuration of tools (runtime.ModelTools
// from generated code): each a toolSpec with keel's input schema and a
// description that names the declared error codes.
func Tools(tools []runtime.ModelTool) (*types.ToolConfiguration, error) {
	return ToolsFor(tools, Options{})
}

// ToolsFor is Tools shaped by opts (PlainSchemas for Amazon Nova).
func ToolsFor(tools []runtime.ModelTool, opts Options) (*types.ToolConfiguration, error) {
	cfg := &types.ToolConfiguration{}
	for _, t := range tools {
		params := t.Parameters
		if opts.PlainSchemas {
			var err error
			if params, _, err = forms.NovaPlain(params); err != nil {
				return nil, fmt.Errorf("tool %s: %w", t.Name, err)
			}
		}
		schema, err := documentValue(params)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		spec := types.ToolSpecification{
			Name:        aws.String(t.Name),
			InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)},
		}
		if d := t.DescriptionForModel(); d != "" { // Bedrock refuses an empty description; it may be absent
			spec.Description = aws.String(d)
		}
		cfg.Tools = append(cfg.Tools, &types.ToolMemberToolSpec{Value: spec})
	}
	return cfg, nil
}

// ToolCall turns a toolUse block into a keel ToolCall; the executor checks
// it. An input that does not encode as JSON reaches the executor as no
// arguments, which it refuses.
func ToolCall(u types.ToolUseBlock) runtime.ToolCall {
	var args []byte
	if u.Input != nil {
		args, _ = u.Input.MarshalSmithyDocument()
	}
	return runtime.ToolCall{ID: aws.ToString(u.ToolUseId), Name: aws.ToString(u.Name), Arguments: args}
}

// Result answers a call: a toolResult block whose json content is the
// result as keel writes it (its stable code included when it failed), with
// status "error" on every failure unless opts say otherwise.
func Result(r runtime.ToolResult, opts Options) (types.ContentBlock, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	doc, err := documentValue(b)
	if err != nil {
		return nil, err
	}
	block := types.ToolResultBlock{
		ToolUseId: aws.String(r.CallID),
		Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(doc)}},
	}
	switch {
	case r.OK:
		block.Status = types.ToolResultStatusSuccess
	case !opts.NoErrorStatus:
		block.Status = types.ToolResultStatusError
	}
	return &types.ContentBlockMemberToolResult{Value: block}, nil
}

// documentValue decodes JSON for a smithy document with every number kept
// as written (a float64 would round an integer past 2^53, in a bound or in a
// result the model reads).
func documentValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return exactNumbers(v), nil
}

func exactNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		return smithydoc.Number(v)
	case map[string]any:
		for k, x := range v {
			v[k] = exactNumbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = exactNumbers(x)
		}
	}
	return v
}
