// Package cedarpolicy decides keel tool calls with Cedar policies
// (github.com/cedar-policy/cedar-go), behind runtime.Policy.
//
// Each call becomes one Cedar request:
//
//	principal  Keel::Principal::"<principal>"  attrs {tenant}, parents Keel::Group::"<group>"...
//	action     Keel::Action::"<tool name>"
//	resource   Keel::Tool::"<tool name>"       attrs {effect, version}
//	context    {tenant, principal, effect, version, args, extra, tainted}
//
// The context always has every key: args is the validated arguments as a
// record (numbers as Long or decimal by the input schema's type, one form
// whatever the spelling), extra holds the harness's own attributes (Options.ExtraKeys,
// "" when unknown), tainted whether text from outside the system entered the
// conversation (runtime.ExecutionContext.Tainted). A permit annotated @approval("required") allows the call
// only with a person's approval. Every evaluation error is a deny: cedar-go
// skips a forbid that errors, which could otherwise let a call through.
package cedarpolicy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cedar-policy/cedar-go"

	"github.com/keelgen/keel/internal/schemamodel"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/wire"
)

// Entity types of the requests.
const (
	PrincipalType = cedar.EntityType("Keel::Principal")
	GroupType     = cedar.EntityType("Keel::Group")
	ActionType    = cedar.EntityType("Keel::Action")
	ToolType      = cedar.EntityType("Keel::Tool")
)

// Options configure the policy.
type Options struct {
	// ExtraKeys are the attributes Extra supplies under context.extra.
	ExtraKeys []string
	// Extra returns the harness's attributes for a call, e.g. which tenant
	// owns the incident it names. Keys outside ExtraKeys are ignored.
	Extra func(ctx context.Context, req runtime.PolicyRequest) map[string]string
}

// Policy is a runtime.Policy backed by a Cedar policy set.
type Policy struct {
	set     *cedar.PolicySet
	opts    Options
	schemas schemaCache
}

// New returns a policy deciding with set.
func New(set *cedar.PolicySet, opts Options) *Policy {
	return &Policy{set: set, opts: opts}
}

// LoadFiles parses policy files at start-up. A policy that does not parse
// stops start-up with its position. Policies are named by their @id
// annotation, or "file:index"; two policies with one name are an error.
func LoadFiles(paths ...string) (*cedar.PolicySet, error) {
	set := cedar.NewPolicySet()
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		list, err := cedar.NewPolicyListFromBytes(path, src)
		if err != nil {
			return nil, fmt.Errorf("cedar policies: %s: %w", path, err)
		}
		for i, p := range list {
			id := cedar.PolicyID(fmt.Sprintf("%s:%d", filepath.Base(path), i))
			if name, ok := p.Annotations()["id"]; ok {
				id = cedar.PolicyID(name)
			}
			if !set.Add(id, p) {
				return nil, fmt.Errorf("cedar policies: %s: two policies are named %q", path, id)
			}
		}
	}
	return set, nil
}

// Decide evaluates the call. The reason names the deciding policies, for
// the audit log.
func (p *Policy) Decide(ctx context.Context, req runtime.PolicyRequest) runtime.Decision {
	creq, entities, err := p.request(ctx, req)
	if err != nil {
		return runtime.Decision{Reason: "cedar: deny: " + err.Error()}
	}
	decision, diag := p.set.IsAuthorized(entities, creq)
	if len(diag.Errors) > 0 {
		var errs []string
		for _, e := range diag.Errors {
			errs = append(errs, e.String())
		}
		return runtime.Decision{Reason: "cedar: deny: evaluation errors: " + strings.Join(errs, "; ")}
	}
	ids := make([]string, 0, len(diag.Reasons))
	approval := false
	for _, r := range diag.Reasons {
		ids = append(ids, string(r.PolicyID))
		if pol := p.set.Get(r.PolicyID); pol != nil && pol.Annotations()["approval"] == "required" {
			approval = true
		}
	}
	sort.Strings(ids)
	switch {
	case decision != cedar.Allow && len(ids) > 0:
		return runtime.Decision{Reason: "cedar: deny: forbidden by " + strings.Join(ids, ", ")}
	case decision != cedar.Allow:
		return runtime.Decision{Reason: "cedar: deny: no policy permits"}
	case approval:
		return runtime.Decision{NeedsApproval: true, Reason: "cedar: permitted with approval by " + strings.Join(ids, ", ")}
	default:
		return runtime.Decision{Allow: true, Reason: "cedar: permitted by " + strings.Join(ids, ", ")}
	}
}

// request builds the Cedar request and entities of a call, always with the
// same shape.
func (p *Policy) request(ctx context.Context, req runtime.PolicyRequest) (cedar.Request, cedar.EntityMap, error) {
	// Judge the value the handler will receive, as the reader accepted it,
	// not the literal: a float64 member sent as 599999999999999.9999 is
	// 6e14 to the handler, a float32 member sent as 4999.9999 is 5000, and
	// a union member is its one value.
	doc, err := req.ValueJSON()
	if err != nil {
		return cedar.Request{}, nil, fmt.Errorf("arguments: %w", err)
	}
	args, err := jsonToCedar(doc, p.schemas.get(req.Tool.InputSchema))
	if err != nil {
		return cedar.Request{}, nil, fmt.Errorf("arguments: %w", err)
	}
	record, ok := args.(cedar.Record)
	if !ok {
		return cedar.Request{}, nil, fmt.Errorf("arguments are not an object")
	}
	extra := cedar.RecordMap{}
	var given map[string]string
	if p.opts.Extra != nil {
		given = p.opts.Extra(ctx, req)
	}
	for _, k := range p.opts.ExtraKeys {
		extra[cedar.String(k)] = cedar.String(given[k])
	}
	ec := req.Context
	principal := cedar.NewEntityUID(PrincipalType, cedar.String(ec.Principal))
	var groups []cedar.EntityUID
	entities := cedar.EntityMap{}
	for _, g := range ec.Groups {
		uid := cedar.NewEntityUID(GroupType, cedar.String(g))
		groups = append(groups, uid)
		entities[uid] = cedar.Entity{UID: uid}
	}
	entities[principal] = cedar.Entity{UID: principal, Parents: cedar.NewEntityUIDSet(groups...),
		Attributes: cedar.NewRecord(cedar.RecordMap{"tenant": cedar.String(ec.Tenant)})}
	tool := cedar.NewEntityUID(ToolType, cedar.String(req.Tool.Name))
	entities[tool] = cedar.Entity{UID: tool, Attributes: cedar.NewRecord(cedar.RecordMap{
		"effect": cedar.String(req.Tool.Effect), "version": cedar.String(req.Tool.Version)})}
	return cedar.Request{
		Principal: principal,
		Action:    cedar.NewEntityUID(ActionType, cedar.String(req.Tool.Name)),
		Resource:  tool,
		Context: cedar.NewRecord(cedar.RecordMap{
			"tenant": cedar.String(ec.Tenant), "principal": cedar.String(ec.Principal),
			"effect": cedar.String(req.Tool.Effect), "version": cedar.String(req.Tool.Version),
			"args": record, "extra": cedar.NewRecord(extra),
			"tainted": cedar.Boolean(ec.Tainted != nil && ec.Tainted.Load()),
		}),
	}, entities, nil
}

// jsonToCedar converts validated arguments, guided by the tool's input
// schema: objects to records, arrays to sets, null members left out, and
// each number to one canonical Cedar value, whatever its spelling. A member
// the schema types "integer" becomes a Long; "number" becomes a decimal
// (Cedar's fixed point, four places), so 0.5, 0.50 and 5e-1 are one value;
// elsewhere an integral value is a Long and any other a decimal. A number
// that a decimal or Long cannot hold exactly is an error, and the call is
// denied: a policy on a number cannot be passed by spelling it differently.
func jsonToCedar(raw []byte, schema *schemamodel.Schema) (cedar.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var defs schemamodel.Defs
	if schema != nil {
		defs = schemamodel.DefsOf(schema)
	}
	return cedarValue{defs}.of(v, schema)
}

// cedarValue converts by a schema whose $refs (a recursive type) resolve
// to its root's $defs, followed as deep as the value goes.
type cedarValue struct{ defs schemamodel.Defs }

// schemaCache reads each tool's input schema once: a tool set is fixed, so
// it holds an entry a tool (up to maxCachedSchemas; past that, a schema is
// read on each call).
type schemaCache struct {
	mu sync.RWMutex
	m  map[string]*schemamodel.Schema
}

const maxCachedSchemas = 4096

// get returns the schema doc reads as; nil when it does not read (numbers
// are then converted by value alone).
func (c *schemaCache) get(doc []byte) *schemamodel.Schema {
	c.mu.RLock()
	s, ok := c.m[string(doc)]
	c.mu.RUnlock()
	if ok {
		return s
	}
	s, err := schemamodel.Parse(doc)
	if err != nil {
		s = nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*schemamodel.Schema{}
	}
	if len(c.m) < maxCachedSchemas {
		c.m[string(doc)] = s
	}
	return s
}

func (c cedarValue) of(v any, schema *schemamodel.Schema) (cedar.Value, error) {
	schema = c.defs.Of(schema)
	switch v := v.(type) {
	case map[string]any:
		m := cedar.RecordMap{}
		for k, x := range v {
			if x == nil {
				continue
			}
			cv, err := c.of(x, memberSchema(schema, k))
			if err != nil {
				return nil, err
			}
			m[cedar.String(k)] = cv
		}
		return cedar.NewRecord(m), nil
	case []any:
		var items *schemamodel.Schema
		if schema != nil {
			items = schema.Items
		}
		var out []cedar.Value
		for _, x := range v {
			if x == nil {
				continue
			}
			cv, err := c.of(x, items)
			if err != nil {
				return nil, err
			}
			out = append(out, cv)
		}
		return cedar.NewSet(out...), nil
	case string:
		return cedar.String(v), nil
	case bool:
		return cedar.Boolean(v), nil
	case json.Number:
		return numberToCedar(string(v), types(schema))
	default:
		return nil, fmt.Errorf("value of type %T", v)
	}
}

// decimalScale is Cedar decimal's fixed point: four places.
var decimalScale = big.NewRat(10000, 1)

// numberToCedar gives a JSON number its one Cedar form.
func numberToCedar(text string, typ map[string]bool) (cedar.Value, error) {
	if p := wire.NumberProblem([]byte(text)); p != "" { // before math/big, which is quadratic in the length
		return nil, fmt.Errorf("%s", p)
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return nil, fmt.Errorf("number %q", text)
	}
	asDecimal := typ["number"] || (!typ["integer"] && !r.IsInt())
	if !asDecimal {
		if !r.IsInt() || !r.Num().IsInt64() {
			return nil, fmt.Errorf("integer %s does not fit a Cedar Long", text)
		}
		return cedar.Long(r.Num().Int64()), nil
	}
	scaled := new(big.Rat).Mul(r, decimalScale)
	if !scaled.IsInt() || !scaled.Num().IsInt64() {
		return nil, fmt.Errorf("number %s is not a Cedar decimal exactly (four places, about ±9.2e14)", text)
	}
	d, err := cedar.NewDecimal(scaled.Num().Int64(), -4)
	if err != nil {
		return nil, fmt.Errorf("number %s: %w", text, err)
	}
	return d, nil
}

// memberSchema is the schema of member name of an object schema: its
// property, else its additionalProperties schema; nil when unknown.
func memberSchema(schema *schemamodel.Schema, name string) *schemamodel.Schema {
	if schema == nil {
		return nil
	}
	if m := schema.Property(name); m.IsObject() {
		return m
	}
	if m := schema.AdditionalProperties; m.IsObject() {
		return m
	}
	for _, alt := range alternatives(schema) {
		if m := memberSchema(alt, name); m != nil {
			return m
		}
	}
	return nil
}

// types is the set of JSON types a schema allows, its anyOf and oneOf
// alternatives included.
func types(schema *schemamodel.Schema) map[string]bool {
	out := map[string]bool{}
	if schema == nil {
		return out
	}
	for _, t := range schema.Type {
		out[t] = true
	}
	for _, alt := range alternatives(schema) {
		for t := range types(alt) {
			out[t] = true
		}
	}
	return out
}

// alternatives are a schema's anyOf and oneOf alternatives that are objects.
func alternatives(schema *schemamodel.Schema) []*schemamodel.Schema {
	var out []*schemamodel.Schema
	for _, alt := range slices.Concat(schema.AnyOf, schema.OneOf) {
		if alt.IsObject() {
			out = append(out, alt)
		}
	}
	return out
}
