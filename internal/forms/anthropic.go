package forms

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/keelgen/keel/internal/schemajson"
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
var anthropicRefused = []string{"patternProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems",
	"contains", "minContains", "maxContains", "allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "oneOf"}

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
	doc, err := schemajson.Doc(schema)
	if err != nil {
		return nil, cost, []string{"the schema is not a JSON object"}
	}
	problems = anthropicStrictify(doc, "", &cost)
	if len(problems) > 0 {
		return nil, cost, problems
	}
	out, err = schemajson.MarshalInOrder(doc, schema)
	if err != nil {
		return nil, cost, []string{err.Error()}
	}
	return out, cost, nil
}

func anthropicStrictify(s map[string]any, path string, cost *AnthropicCost) []string {
	var problems []string
	at := problemAt(&problems, path)
	strictNode(s, "Anthropic's strict mode", anthropicRefused, describeAnthropic, at)
	if props, ok := s["properties"].(map[string]any); ok || s["type"] == "object" {
		_, req := schemajson.Properties(s)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			sub, _ := props[name].(map[string]any)
			if sub == nil {
				at("property %q has no schema", name)
				continue
			}
			if !req[name] {
				cost.Optional++
			}
			if len(schemajson.Strings(sub["type"])) > 1 || sub["anyOf"] != nil {
				cost.Unions++
			}
			problems = append(problems, anthropicStrictify(sub, join(path, name), cost)...)
		}
	}
	itemsAndAlternatives(s, path, func(sub map[string]any, path string, _ bool) {
		problems = append(problems, anthropicStrictify(sub, path, cost)...)
	})
	return problems
}

// describeAnthropic moves the bounds Anthropic's strict mode does not take
// into the member's description, in words.
func describeAnthropic(s map[string]any) {
	var notes []string
	bound := func(kw, words string) {
		if v, ok := s[kw]; ok {
			delete(s, kw)
			notes = append(notes, fmt.Sprintf(words, v))
		}
	}
	bound("minimum", "at least %v")
	bound("exclusiveMinimum", "more than %v")
	bound("maximum", "at most %v")
	bound("exclusiveMaximum", "less than %v")
	bound("multipleOf", "a multiple of %v")
	bound("minLength", "at least %v characters")
	bound("maxLength", "at most %v characters")
	bound("maxItems", "at most %v items")
	bound("minProperties", "at least %v members")
	bound("maxProperties", "at most %v members")
	if v, ok := s["minItems"]; ok && fmt.Sprint(v) != "0" && fmt.Sprint(v) != "1" {
		delete(s, "minItems")
		notes = append(notes, fmt.Sprintf("at least %v items", v))
	}
	if u, ok := s["uniqueItems"]; ok {
		delete(s, "uniqueItems")
		if u == true {
			notes = append(notes, "no item twice")
		}
	}
	for _, kw := range []string{"contentEncoding", "contentMediaType"} {
		if v, ok := s[kw].(string); ok {
			delete(s, kw)
			notes = append(notes, kw+": "+v)
		}
	}
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
