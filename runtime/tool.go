package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/keelgen/keel/internal/schemamodel"
	"github.com/keelgen/keel/internal/toolrules"
	"github.com/keelgen/keel/runtime/wire"
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
	// Title is a short human-readable name, for clients that show one
	// (MCP); "" when none.
	Title string
	// Approve is the tool's own wording of the approval question
	// (//keel:approve), a template whose {member} placeholders name
	// members of the arguments; "" when none. The question shows it above
	// the whole call, never instead of it.
	Approve string
	// Hints are what the author states about the tool's behaviour beyond
	// its effect (//keel:tool destructive=, idempotent=, world=); an unset
	// hint takes the default that is safe for a reviewer.
	Hints Hints
	// Deferred marks a tool of this set a model loads on demand, through the
	// provider's tool search (keelgen -defer), not up front; Namespace
	// groups deferred tools (their handler package's name).
	Deferred  bool
	Namespace string
	// Content are the MIME types of content blocks the tool may return
	// (//keel:tool content=image/png,text/*), sorted; none for a tool whose
	// result is its data alone.
	Content []string
	// Scopes are the OAuth scopes a caller's credentials must all grant
	// (//keel:tool scopes=ops:write), sorted: a call whose
	// ExecutionContext.Scopes lacks one is insufficient_scope, before
	// anything else runs.
	Scopes []string
	// Groups are the tool groups the tool belongs to (//keel:tool
	// groups=dashboards,admin), sorted: a server enables groups with
	// WithToolGroups, and a tool of none it enables is absent.
	Groups []string
	// LaxNumbers reads an integer or number member also from a string
	// holding a JSON number ("5"), and an integer also from an integral
	// number written with a fraction or an exponent (2.0): models send
	// them (//keel:tool lax=numbers). The schema still says integer, the
	// bounds hold on the value, and the handler gets the exact checked
	// value. Only a generated reader reads lax; a hand-bound tool with it
	// is refused.
	LaxNumbers bool
	// OwnText: the result's text in MCP's text block is its author's (the
	// result type's MCPText method), not its JSON. Many hosts give that
	// block to the model, so the lock records it; a result type's method
	// is used only when its tool says so.
	OwnText bool
	// NoTextCopy: for a client of MCP's 2026-07-28 revision, which reads
	// structuredContent, the result's data is there alone, with no JSON
	// copy in a text block (//keel:tool text=none): half the bytes. A
	// client of an earlier revision still gets the copy, as those ask.
	NoTextCopy bool
	// Icons are the tool's icons for a client that shows one
	// (//keel:icon), in the order written; Meta are static _meta entries
	// an MCP client reads with the tool (//keel:meta), by key, such as an
	// MCP App's ui resource. Neither reaches the model.
	Icons []Icon
	Meta  map[string]json.RawMessage
}

// Icon is one of a tool's icons, as MCP lists it: an https URL or a data:
// URI, its MIME type, the sizes it serves (48x48, any) and the background
// it is drawn for (light, dark); keelgen checks each.
type Icon struct {
	Src, MIMEType, Theme string
	Sizes                []string
}

// Hints are a tool's behaviour hints as the author stated them; nil means
// unstated. Clients (MCP hosts, directories) decide confirmation prompts by
// them, so the defaults are the cautious ones: a write is destructive, a
// read is idempotent and a write is not, and every tool is open-world
// (it may reach beyond the process) unless its author says closed.
type Hints struct {
	Destructive *bool
	Idempotent  *bool
	OpenWorld   *bool
}

// Destructive reports whether a call may destroy or overwrite data: false
// for a read; for a write, true unless its author said destructive=false.
func (info ToolInfo) Destructive() bool {
	if info.Effect == EffectRead {
		return false
	}
	return info.Hints.Destructive == nil || *info.Hints.Destructive
}

// Idempotent reports whether repeating a call has no further effect: as
// stated, else true for a read and false for a write.
func (info ToolInfo) Idempotent() bool {
	if info.Hints.Idempotent != nil {
		return *info.Hints.Idempotent
	}
	return info.Effect == EffectRead
}

// OpenWorld reports whether a call may reach beyond the process (an outside
// API, the web): true unless its author said world=closed.
func (info ToolInfo) OpenWorld() bool {
	return info.Hints.OpenWorld == nil || *info.Hints.OpenWorld
}

// declares reports whether the tool may return code.
func (info *ToolInfo) declares(code Code) bool {
	return slices.Contains(info.Errors, code)
}

// Tool is one registered tool: its contract and its bound handler. Generated
// code makes its tools with NewTools, from a table of ToolSpecs, and selects
// them by its static switch; NewTool makes one by hand (runtime/keeltest).
type Tool struct {
	info    ToolInfo
	handler Handler
	// compiled: the handler is a generated reader that checks its own input
	// and output; otherwise (Handle) the executor validates both against
	// the schemas.
	compiled bool
	// sensitive: the input schema marks a member writeOnly, whose value
	// the protected log never quotes.
	sensitive bool
	// untrusted: the output schema marks a member x-keel-untrusted; its
	// places are read on the first result (untrusted.go).
	untrusted      bool
	untrustedOnce  sync.Once
	untrustedPaths [][]string

	compileOnce sync.Once
	input       *jsonschema.Schema
	inputDoc    *schemamodel.Schema // the input schema, typed, for Details and nulls
	output      *jsonschema.Schema
	compileErr  error

	detailOnce sync.Once
	detailDoc  *schemamodel.Schema // the input schema, typed, read on a compiled tool's first Details

	resultSize atomic.Int32 // the buffer for the next result (sizeHint of the last)
}

// inputForDetails is the input schema, typed, for the Details of a refused
// call; nil when it does not read.
func (t *Tool) inputForDetails() *schemamodel.Schema {
	if t.inputDoc != nil {
		return t.inputDoc
	}
	t.detailOnce.Do(func() { t.detailDoc, _ = schemamodel.Parse(t.info.InputSchema) })
	return t.detailDoc
}

// NewTool binds a contract to a handler. The schemas are compiled once, on
// first use: NewExecutor compiles them at start for a set without a lock;
// for a set with a lock, whose digests prove the schemas are the ones
// keelgen compiled when it wrote them, on the tool's first call.
func NewTool(info ToolInfo, h Handler) *Tool {
	_, handBound := h.(validatedHandler)
	return &Tool{info: info, handler: h, compiled: h != nil && !handBound, sensitive: bytes.Contains(info.InputSchema, []byte(`"writeOnly"`)),
		untrusted: info.HasUntrustedOutput()}
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
		t.input, t.compileErr = toolrules.CompileSchema(t.info.Name+"/input", t.info.InputSchema)
		if t.compileErr == nil {
			t.output, t.compileErr = toolrules.CompileSchema(t.info.Name+"/output", t.info.OutputSchema)
		}
		if t.compileErr == nil { // the typed reading the null and detail walks follow
			var err error
			if t.inputDoc, err = schemamodel.Parse(t.info.InputSchema); err != nil {
				t.compileErr = fmt.Errorf("schema %s/input: %w", t.info.Name, err)
			}
		}
	})
	return t.input, t.output, t.compileErr
}

// checkCodes refuses declared codes that are not business codes, and an
// approval wording whose placeholders are not members of the arguments.
func (t *Tool) checkCodes() error {
	for _, c := range t.info.Errors {
		if !isBusinessCode(c) {
			return fmt.Errorf("declared error code %q is not a business code", c)
		}
	}
	if t.info.Approve != "" {
		if problem := t.approveMembers(); problem != "" {
			return fmt.Errorf("the approval wording %s", problem)
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

// ModelTools is what a model is shown of a whole set (Executor.ModelToolsFor: of what one caller may call): each tool's name,
// description, parameters schema and business codes, in the set's order
// (sorted by name). Generated code's ModelTools calls it, so every
// description is written once, in the tool's contract.
func ModelTools(set ToolSet) []ModelTool {
	tools := set.Tools()
	out := make([]ModelTool, 0, len(tools))
	for _, t := range tools {
		info := t.Info()
		m := info.modelTool() // a copy: the caller cannot reach the executor's schema
		m.Deferred, m.Namespace = info.Deferred, info.Namespace
		out = append(out, m)
	}
	return out
}

// modelTool is what a model is shown of info.
func (info ToolInfo) modelTool() ModelTool {
	return ModelTool{Name: info.Name, Description: info.Description, Parameters: info.InputSchema, ErrorCodes: info.Errors,
		Untrusted: info.HasUntrustedOutput()}
}

// ModelTool is what a model is shown of a tool.
type ModelTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// ErrorCodes are the business error codes the tool may return, besides
	// the executor's own.
	ErrorCodes []Code `json:"error_codes,omitempty"`
	// Untrusted: the tool's result may carry text from outside the
	// system, which the description tells the model is data.
	Untrusted bool `json:"untrusted,omitzero"`
	// Deferred and Namespace: the tool is loaded on demand, in that group,
	// by providers with tool search (anthropic.Tools, openai's Responses
	// tools); the others are shown it up front.
	Deferred  bool   `json:"deferred,omitzero"`
	Namespace string `json:"namespace,omitempty"`
}

// DescriptionForModel is the description with the declared error codes
// said in one closing sentence, for provider formats that have no field for
// them (OpenAI, Anthropic, Ollama, MCP): the model learns up front that
// rate_limited exists, not by hitting it. The lock's budget counts the codes
// already (a ModelTool's bytes).
func (m ModelTool) DescriptionForModel() string {
	d := m.Description
	if m.Untrusted {
		d = strings.TrimSpace(d) + " " + untrustedNote
	}
	if len(m.ErrorCodes) == 0 {
		return d
	}
	names := make([]string, len(m.ErrorCodes))
	for i, c := range m.ErrorCodes {
		names[i] = string(c)
	}
	return strings.TrimSpace(d) + " Errors it may return: " + strings.Join(names, ", ") + "."
}

// Handler is a handler bound to its argument and result types: a reader
// of its arguments that returns the call to run. keelgen generates one per
// argument and result type (a func type of keel_codecs.go, whose Read reads
// the arguments token by token straight into the handler's argument value
// and checks every keyword of the input schema on that value); Handle makes
// one for a tool set written by hand.
type Handler interface {
	Read(d *wire.Decoder) (wire.Call, error)
}

// ToolSpec is one tool as generated code lists it, in a table the compiler
// lays out as data: its contract without the schemas, and its handler.
type ToolSpec struct {
	Info    ToolInfo
	Handler Handler
}

// NewTools makes the tools of specs, reading each tool's schemas from
// schemas/<name>.input.json and schemas/<name>.output.json in fsys (the
// generated package's embedded files). A missing file leaves the schema
// empty, which NewExecutor's lock check refuses.
func NewTools(fsys fs.FS, specs []ToolSpec) []*Tool {
	out := make([]*Tool, len(specs))
	for i, s := range specs {
		info := s.Info
		info.InputSchema, _ = fs.ReadFile(fsys, "schemas/"+info.Name+".input.json")
		info.OutputSchema, _ = fs.ReadFile(fsys, "schemas/"+info.Name+".output.json")
		out[i] = NewTool(info, s.Handler)
	}
	return out
}

// wireDecoders reuses decoders across calls.
var wireDecoders = sync.Pool{New: func() any { return new(wire.Decoder) }}

// readCompiled runs a generated reader over args, within the limits,
// reading numbers laxly for a tool that says so.
func readCompiled(h Handler, args []byte, lim Limits, lax bool) (wire.Call, error) {
	if len(args) > lim.MaxArgumentBytes {
		return nil, wire.Failf("maxBytes", fmt.Sprintf("%d bytes, over the limit of %d", len(args), lim.MaxArgumentBytes))
	}
	d := wireDecoders.Get().(*wire.Decoder)
	defer wireDecoders.Put(d)
	d.Reset(args, lim.MaxDepth)
	if lax {
		d.LaxNumbers()
	}
	call, err := h.Read(d)
	if err == nil {
		err = d.Finish()
	}
	if err != nil {
		return nil, err
	}
	return call, nil
}

// Handle binds fn, a handler with argument struct A and result R, for a
// tool set written by hand: its arguments are validated against the input
// schema by a JSON Schema validator, then decoded with json v2, and its
// result is encoded and validated against the output schema. keelgen
// generates readers instead, which check the Go values in one pass.
func Handle[A, R any](fn func(context.Context, A) (R, error)) Handler {
	return &typedHandler[A, R]{fn: fn} // a pointer: no value-method wrappers per instantiation
}

type typedHandler[A, R any] struct {
	fn func(context.Context, A) (R, error)
}

// strictDecode: exact-case names, unknown members and duplicates rejected,
// invalid UTF-8 rejected, no float→int conversion (json v2 semantics); and
// netip's types read as generated readers read them (never the zero value
// for "", no zone of arbitrary text).
var strictDecode = jsonv2.JoinOptions(
	jsonv2.RejectUnknownMembers(true),
	jsonv2.MatchCaseInsensitiveNames(false),
	jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
		textUnmarshaler(wire.ParseAddr),
		textUnmarshaler(wire.ParsePrefix),
		textUnmarshaler(wire.ParseAddrPort),
	)),
)

// textUnmarshaler reads a JSON string into a T with parse.
func textUnmarshaler[T any](parse func(string) (T, error)) *jsonv2.Unmarshalers {
	return jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *T) error {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if tok.Kind() != '"' {
			return errors.New("not a string")
		}
		x, err := parse(tok.String())
		if err != nil {
			return err
		}
		*v = x
		return nil
	})
}

// resultEncode writes a nil slice as [] and a nil map as {} (json v2's
// default, and what generated writers do): a handler that found nothing
// returns nil, as idiomatic Go does.
var resultEncode = jsonv2.Deterministic(true)

// validatedHandler is a Handler whose arguments the executor validates
// against the schema before it decodes them (Handle's).
type validatedHandler interface {
	decodeValidated(args []byte) (wire.Call, error)
}

// decodeValidated decodes args; the executor has validated them.
func (h *typedHandler[A, R]) decodeValidated(args []byte) (wire.Call, error) {
	c := &typedCall[A, R]{fn: h.fn}
	if err := jsonv2.Unmarshal(args, &c.args, strictDecode); err != nil {
		return nil, err
	}
	return c, nil
}

// Read decodes the decoder's whole input with json v2; the executor calls
// decodeValidated instead, after the validator.
func (h *typedHandler[A, R]) Read(d *wire.Decoder) (wire.Call, error) {
	return h.decodeValidated(d.Source())
}

type typedCall[A, R any] struct {
	fn     func(context.Context, A) (R, error)
	args   A
	result R
}

// Arguments is the decoded argument value, for the policy.
func (c *typedCall[A, R]) Arguments() any { return &c.args }

func (c *typedCall[A, R]) Run(ctx context.Context) (err error) {
	c.result, err = c.fn(ctx, c.args)
	return err
}

// Result encodes with json v2, for a caller of Call; the executor calls
// encode and validates the output schema itself.
func (c *typedCall[A, R]) Result(e *wire.Encoder) error {
	out, err := c.encode()
	if err != nil {
		return wire.Failf("json", err.Error())
	}
	return e.Raw(out)
}

func (c *typedCall[A, R]) encode() ([]byte, error) {
	if w, ok := any(&c.result).(contentCarrier); ok {
		return jsonv2.Marshal(w.data(), resultEncode)
	}
	return jsonv2.Marshal(c.result, resultEncode)
}

// Text is the result's own text, when R has a method MCPText() string
// (generated calls have it only then).
func (c *typedCall[A, R]) Text() string {
	if t, ok := any(&c.result).(interface{ MCPText() string }); ok {
		return t.MCPText()
	}
	return ""
}

// Content is the result's content blocks, when R is a WithContent.
func (c *typedCall[A, R]) Content() []Content {
	if w, ok := any(&c.result).(contentCarrier); ok {
		return w.blocks()
	}
	return nil
}

// encoder is a wire.Call whose result the executor validates against the
// output schema (Handle's).
type encoder interface{ encode() ([]byte, error) }
