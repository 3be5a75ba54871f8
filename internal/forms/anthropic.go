package forms

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/keelgen/keel/internal/schemamodel"
)

// Anthropic's strict tools (tools[].strict) sample the arguments from a
// grammar compiled from every strict tool of a request, so they take no
// numeric or length bounds, minItems only 0 or 1, and a budget per request.
const (
	AnthropicStrictTools    = 20 // strict tools in one request
	AnthropicOptionalParams = 24 // optional properties, over every strict tool
	AnthropicUnionParams    = 16 // properties whose type is a union (a list of types, anyOf)
)

// anthropicRefused are keywords Anthropic's strict mode cannot take and no
// words can stand for.
var anthropicRefused = schemamodel.With(func(r schemamodel.Rule) bool { return r.Anthropic == schemamodel.StrictRefuse })

// anthropicWords are the bounds Anthropic's strict mode takes only as
// words (minItems but 0 and 1, below).
var anthropicWords = schemamodel.With(func(r schemamodel.Rule) bool { return r.Anthropic == schemamodel.StrictWords })

// AnthropicCost is what one strict tool spends of the request's budget.
type AnthropicCost struct {
	Optional, Unions int
}

// AnthropicStrict rewrites schema for Anthropic's strict mode: the bounds it
// does not take move into descriptions in words (the executor still enforces
// them), every object is closed, and the member order stays the author's. It
// returns the problems that make a strict form impossible instead, and what
// the tool costs of the request's budget.
func AnthropicStrict(schema json.RawMessage) (out json.RawMessage, cost AnthropicCost, problems []string) {
	schema, _, err := inlineRefs(schema)
	if err != nil {
		return nil, cost, []string{"the schema is not a JSON object"}
	}
	doc, err := schemamodel.Parse(schema)
	if err != nil || !doc.IsObject() {
		return nil, cost, []string{"the schema is not a JSON object"}
	}
	problems = anthropicStrictify(doc, "", &cost)
	if len(problems) > 0 {
		return nil, cost, problems
	}
	out, err = doc.MarshalJSON()
	if err != nil {
		return nil, cost, []string{err.Error()}
	}
	return out, cost, nil
}

func anthropicStrictify(s *schemamodel.Schema, path string, cost *AnthropicCost) []string {
	var problems []string
	at := problemAt(&problems, path)
	strictNode(s, "Anthropic's strict mode", anthropicRefused, describeAnthropic, at)
	if s.Properties != nil || s.Type.Is("object") {
		for _, name := range slices.Sorted(slices.Values(s.PropertyNames())) {
			sub := s.Property(name)
			if !sub.IsObject() {
				at("property %q has no schema", name)
				continue
			}
			if !s.IsRequired(name) {
				cost.Optional++
			}
			if len(sub.Type) > 1 || sub.AnyOf != nil {
				cost.Unions++
			}
			problems = append(problems, anthropicStrictify(sub, join(path, name), cost)...)
		}
	}
	itemsAndAlternatives(s, path, func(sub *schemamodel.Schema, path string, _ bool) {
		problems = append(problems, anthropicStrictify(sub, path, cost)...)
	})
	return problems
}

// describeAnthropic moves the bounds Anthropic's strict mode does not take
// into the member's description, in words.
func describeAnthropic(s *schemamodel.Schema) {
	notes := slices.Concat(alternativesInWords(s), dependentsInWords(s), textBoundsInWords(s), notInWords(s))
	bound := func(kw string) {
		if v := moveToWords(s, kw); v != "" {
			notes = append(notes, schemamodel.Said(kw, v))
		}
	}
	for _, kw := range anthropicWords {
		bound(kw)
	}
	if r := s.MinItems.Rat(); r != nil && r.Cmp(big.NewRat(0, 1)) != 0 && r.Cmp(big.NewRat(1, 1)) != 0 {
		bound("minItems")
	}
	notes = append(notes, uniqueInWords(s)...)
	notes = append(notes, contentInWords(s)...)
	sayInDescription(s, notes)
}

// AnthropicBudget says how a set of strict tools, together, exceeds what one
// request may carry; none when it fits.
func AnthropicBudget(tools int, total AnthropicCost) []string {
	var out []string
	if tools > AnthropicStrictTools {
		out = append(out, fmt.Sprintf("%d strict tools, over Anthropic's %d per request", tools, AnthropicStrictTools))
	}
	if total.Optional > AnthropicOptionalParams {
		out = append(out, fmt.Sprintf("%d optional parameters over the strict tools, over Anthropic's %d per request", total.Optional, AnthropicOptionalParams))
	}
	if total.Unions > AnthropicUnionParams {
		out = append(out, fmt.Sprintf("%d union-typed parameters over the strict tools, over Anthropic's %d per request", total.Unions, AnthropicUnionParams))
	}
	return out
}

// AnthropicCandidate is one tool offered to Anthropic's strict mode.
type AnthropicCandidate struct {
	Name     string
	Input    json.RawMessage
	Deferred bool // loaded on demand: its slot is worth less than an up-front tool's
}

// AnthropicSlot is what AnthropicStrictPlan decided for one candidate.
type AnthropicSlot struct {
	Strict bool
	Schema json.RawMessage // the strict form; nil when not strict
	// Why is set when not strict: what strict mode cannot take, or the
	// budget it would exceed.
	Why string
}

// AnthropicStrictPlan spends one request's strict budget: on the tools
// loaded up front first, then on the deferred ones, each in the order
// given (a caller that wants a tool first puts it first), skipping any tool
// strict mode cannot take or whose cost no longer fits. The result is in
// the candidates' order.
func AnthropicStrictPlan(tools []AnthropicCandidate) []AnthropicSlot {
	out := make([]AnthropicSlot, len(tools))
	var spent AnthropicCost
	strict := 0
	for _, deferred := range []bool{false, true} {
		for i, t := range tools {
			if t.Deferred != deferred {
				continue
			}
			schema, cost, problems := AnthropicStrict(t.Input)
			if len(problems) > 0 {
				out[i].Why = strings.Join(problems, "; ")
				continue
			}
			total := AnthropicCost{Optional: spent.Optional + cost.Optional, Unions: spent.Unions + cost.Unions}
			if over := AnthropicBudget(strict+1, total); len(over) > 0 {
				out[i].Why = "past the budget: " + strings.Join(over, "; ")
				continue
			}
			spent, strict = total, strict+1
			out[i] = AnthropicSlot{Strict: true, Schema: schema}
		}
	}
	return out
}
