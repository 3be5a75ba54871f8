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
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithydoc "github.com/aws/smithy-go/document"

	"github.com/keelgen/keel/internal/forms"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/resultjson"
)

// Options shape the definitions (Tools) and the results (Result).
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
// from generated code): each a toolSpec with keel's input schema (in the
// plain form with PlainSchemas, for Amazon Nova) and a description that
// names the declared error codes.
func Tools(tools []runtime.ModelTool, opts Options) (*types.ToolConfiguration, error) {
	cfg := &types.ToolConfiguration{}
	for _, t := range tools {
		params, desc := t.Parameters, t.DescriptionForModel()
		if opts.PlainSchemas {
			var err error
			if params, _, err = forms.NovaPlain(params); err != nil {
				return nil, fmt.Errorf("tool %s: %w", t.Name, err)
			}
			if words := forms.RootWords(t.Parameters); len(words) > 0 { // Nova's root takes no description
				desc = strings.TrimSpace(desc + " (" + strings.Join(words, "; ") + ")")
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
		if desc != "" { // Bedrock refuses an empty description; it may be absent
			spec.Description = aws.String(desc)
		}
		cfg.Tools = append(cfg.Tools, &types.ToolMemberToolSpec{Value: spec})
	}
	return cfg, nil
}

// Call turns a toolUse block into a keel ToolCall; the executor checks
// it. An input that does not encode as JSON reaches the executor as no
// arguments, which it refuses.
func Call(u types.ToolUseBlock) runtime.ToolCall {
	var args []byte
	if u.Input != nil {
		args, _ = u.Input.MarshalSmithyDocument()
	}
	return runtime.ToolCall{ID: aws.ToString(u.ToolUseId), Name: aws.ToString(u.Name), Arguments: args}
}

// Problems says what the plain form for Amazon Nova (Options.PlainSchemas)
// moves out of schema's keywords into descriptions; none when nothing.
func Problems(schema json.RawMessage) []string { return forms.NovaLost(schema) }

// Result answers a call: a toolResult block whose json content is the
// result as keel writes it (its stable code included when it failed), with
// status "error" on every failure unless opts say otherwise. Content blocks
// follow as Bedrock's toolResult takes them: an image (PNG, JPEG, GIF,
// WebP) as an image block; a PDF, Word or Excel file, and any text resource
// (as csv, html, md or txt), as a document named "document N" (Bedrock
// reads a document's name, so it is neutral; the JSON gives its URI).
// Audio, other blobs and links are described in the JSON and marked omitted.
func Result(r runtime.ToolResult, opts Options) (types.ContentBlock, error) {
	doc, err := documentValue([]byte(resultjson.Text(r, bedrockOmitted)))
	if err != nil {
		return nil, err
	}
	block := types.ToolResultBlock{
		ToolUseId: aws.String(r.CallID),
		Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(doc)}},
	}
	docs := 0
	for _, c := range r.Content {
		if b := bedrockBlock(c, &docs); b != nil {
			block.Content = append(block.Content, b)
		}
	}
	switch {
	case r.OK:
		block.Status = types.ToolResultStatusSuccess
	case !opts.NoErrorStatus:
		block.Status = types.ToolResultStatusError
	}
	return &types.ContentBlockMemberToolResult{Value: block}, nil
}

var bedrockImages = map[string]types.ImageFormat{
	"image/png": types.ImageFormatPng, "image/jpeg": types.ImageFormatJpeg, "image/gif": types.ImageFormatGif, "image/webp": types.ImageFormatWebp}

var bedrockDocuments = map[string]types.DocumentFormat{
	"application/pdf": types.DocumentFormatPdf, "text/csv": types.DocumentFormatCsv, "text/html": types.DocumentFormatHtml,
	"text/markdown": types.DocumentFormatMd, "text/plain": types.DocumentFormatTxt, "application/msword": types.DocumentFormatDoc,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": types.DocumentFormatDocx,
	"application/vnd.ms-excel": types.DocumentFormatXls,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": types.DocumentFormatXlsx,
}

// bedrockBlock is c as a toolResult content block, or nil; docs counts the
// documents, which it names.
func bedrockBlock(c runtime.Content, docs *int) types.ToolResultContentBlock {
	if f, ok := bedrockImages[c.MIMEType]; ok && c.Kind == runtime.ContentImage {
		return &types.ToolResultContentBlockMemberImage{Value: types.ImageBlock{Format: f, Source: &types.ImageSourceMemberBytes{Value: c.Data}}}
	}
	if c.Kind != runtime.ContentResource {
		return nil
	}
	f, ok := bedrockDocuments[c.MIMEType]
	data := c.Data
	if c.Text != "" {
		data = []byte(c.Text)
		if !ok || f == types.DocumentFormatPdf || f == types.DocumentFormatDoc || f == types.DocumentFormatDocx || f == types.DocumentFormatXls || f == types.DocumentFormatXlsx {
			f, ok = types.DocumentFormatTxt, true // text is text, whatever its type says
		}
	}
	if !ok {
		return nil
	}
	*docs++
	return &types.ToolResultContentBlockMemberDocument{Value: types.DocumentBlock{
		Name: aws.String(fmt.Sprintf("document %d", *docs)), Format: f, Source: &types.DocumentSourceMemberBytes{Value: data}}}
}

var bedrockOmitted = resultjson.Omissions{
	Carries: func(c runtime.Content) bool { var n int; return bedrockBlock(c, &n) != nil },
	Place:   "Bedrock's toolResult",
	Images:  "Bedrock takes PNG, JPEG, GIF and WebP images only",
	Links:   "a link: Bedrock's toolResult has no place for one",
}.Of

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
