package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ToolInfo is the reviewed contract of a tool, as keelgen generated it.
type ToolInfo struct {
	Name        string
	Version     string
	Effect      Effect
	Description string
	// InputSchema and OutputSchema are JSON Schema (2020-12) documents whose
	// root is an object.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// Timeout bounds the handler; zero means the executor's default.
	Timeout time.Duration
	// Errors are the business error codes the handler may return.
	Errors []Code
}

// declares reports whether the tool may return code.
func (info *ToolInfo) declares(code Code) bool {
	return slices.Contains(info.Errors, code)
}

// Tool is one registered tool: its contract and its bound handler. Tools are
// made by generated code with NewTool and selected by its static switch.
type Tool struct {
	info    ToolInfo
	handler Handler

	compileOnce sync.Once
	input       *jsonschema.Schema
	inputDoc    any // the input schema as a generic document, for Details
	output      *jsonschema.Schema
	compileErr  error
}

// NewTool binds a contract to a handler. The schemas are compiled once, on
// first use: NewExecutor compiles them at start for a set without a lock;
// for a set with a lock, whose digests prove the schemas are the ones
// keelgen compiled when it wrote them, on the tool's first call.
func NewTool(info ToolInfo, h Handler) *Tool {
	return &Tool{info: info, handler: h}
}

// Info returns a copy of the tool's contract; changing it changes nothing
// the executor holds.
func (t *Tool) Info() ToolInfo {
	info := t.info
	info.InputSchema = slices.Clone(info.InputSchema)
	info.OutputSchema = slices.Clone(info.OutputSchema)
	info.Errors = slices.Clone(info.Errors)
	return info
}

func (t *Tool) schemas() (in, out *jsonschema.Schema, err error) {
	t.compileOnce.Do(func() {
		t.input, t.inputDoc, t.compileErr = compileSchema(t.info.Name+"/input", t.info.InputSchema)
		if t.compileErr == nil {
			t.output, _, t.compileErr = compileSchema(t.info.Name+"/output", t.info.OutputSchema)
		}
	})
	return t.input, t.output, t.compileErr
}

// checkCodes refuses declared codes that are not business codes.
func (t *Tool) checkCodes() error {
	for _, c := range t.info.Errors {
		if !IsBusinessCode(c) {
			return fmt.Errorf("declared error code %q is not a business code", c)
		}
	}
	return nil
}

// ToolSet is what keelgen generates: a static switch from name to tool, the
// sorted list of the same tools, and the lock they were generated with.
type ToolSet interface {
	// Lookup returns the tool whose name is exactly name, or nil.
	Lookup(name string) *Tool
	// Tools returns every tool, sorted by name.
	Tools() []*Tool
	// Lock returns the embedded keel.lock.json and, when the lock was
	// signed (keelgen -sign), its detached signature; nil when absent.
	Lock() (lock, signature []byte)
}

// ModelTools is what a model is shown of set: each tool's name,
// description, parameters schema and business codes, in the set's order
// (sorted by name). Generated code's ModelTools calls it, so every
// description is written once, in the tool's contract.
func ModelTools(set ToolSet) []ModelTool {
	tools := set.Tools()
	out := make([]ModelTool, 0, len(tools))
	for _, t := range tools {
		out = append(out, t.Info().modelTool()) // a copy: the caller cannot reach the executor's schema
	}
	return out
}

// modelTool is what a model is shown of info.
func (info ToolInfo) modelTool() ModelTool {
	return ModelTool{Name: info.Name, Description: info.Description, Parameters: info.InputSchema, ErrorCodes: info.Errors}
}

// EmbeddedLock reads keel.lock.json and its detached signature from the
// generated package's embedded files; either is nil when absent.
func EmbeddedLock(fsys fs.FS) (lock, signature []byte) {
	lock, _ = fs.ReadFile(fsys, LockFileName)
	signature, _ = fs.ReadFile(fsys, SignatureFileName)
	return lock, signature
}

// ModelTool is what a model is shown of a tool.
type ModelTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// ErrorCodes are the business error codes the tool may return, besides
	// the executor's own.
	ErrorCodes []Code `json:"error_codes,omitempty"`
}

// Handler is a handler bound to its concrete argument and result types. Only
// Handle makes one, so every handler is reached through strict decoding.
type Handler interface {
	decode(args []byte) (any, error)
	invoke(ctx context.Context, args any) (out []byte, err error)
}

// Handle binds fn, a handler with argument struct A and result R. keelgen
// emits the call; harness code has no need to.
func Handle[A, R any](fn func(context.Context, A) (R, error)) Handler {
	return &typedHandler[A, R]{fn: fn} // a pointer: no value-method wrappers per instantiation
}

type typedHandler[A, R any] struct {
	fn func(context.Context, A) (R, error)
}

// strictDecode: exact-case names, unknown members and duplicates rejected,
// invalid UTF-8 rejected, no float→int conversion (json v2 semantics).
var strictDecode = jsonv2.JoinOptions(
	jsonv2.RejectUnknownMembers(true),
	jsonv2.MatchCaseInsensitiveNames(false),
)

// resultEncode keeps nil slices and maps as null, so a handler that forgot to
// fill a required array fails the output schema instead of passing as [].
var resultEncode = jsonv2.JoinOptions(
	jsonv2.FormatNilSliceAsNull(true),
	jsonv2.FormatNilMapAsNull(true),
	jsonv2.Deterministic(true),
)

func (h *typedHandler[A, R]) decode(args []byte) (any, error) {
	var a A
	if err := jsonv2.Unmarshal(args, &a, strictDecode); err != nil {
		return nil, err
	}
	return a, nil
}

func (h *typedHandler[A, R]) invoke(ctx context.Context, args any) ([]byte, error) {
	a, ok := args.(A)
	if !ok {
		// Unreachable: args always comes from decode of the same handler.
		return nil, fmt.Errorf("keel: argument type mismatch")
	}
	r, err := h.fn(ctx, a)
	if err != nil {
		return nil, err
	}
	out, err := jsonv2.Marshal(r, resultEncode)
	if err != nil {
		return nil, &outputError{err: err}
	}
	return out, nil
}

// outputError marks a result that could not be encoded (NaN, a cycle, …).
type outputError struct{ err error }

func (e *outputError) Error() string { return "encode result: " + e.err.Error() }
func (e *outputError) Unwrap() error { return e.err }
