package gen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/forms"
)

// Target is a provider whose limits keelgen can warn about.
type Target struct {
	Name string
	What string // for the flag's help
	// Problems lists what the provider cannot take of an input schema.
	Problems func(input []byte) []string
	// SetProblems, when set, lists what the provider makes of the set as a
	// whole (a per-request budget), reported at the first tool.
	SetProblems func(tools []TargetTool) []string
	// NameProblem, when set, says why the provider refuses a tool's name.
	NameProblem func(name string) string
}

// TargetTool is one tool of the set, as a target's SetProblems sees it.
type TargetTool struct {
	Name     string
	Input    []byte
	Deferred bool
}

// orNone joins names, or says none.
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// firstNames joins up to n names, and counts the rest.
func firstNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// Targets are the providers -targets knows, in the order they are listed.
var Targets = []Target{
	{Name: "openai-strict", What: "tools OpenAI strict mode cannot take, and why", Problems: func(in []byte) []string {
		var out []string
		for _, p := range forms.OpenAIStrictProblems(in) {
			out = append(out, "not offered in OpenAI strict mode: "+p)
		}
		return out
	}},
	{Name: "anthropic-strict", What: "tools Anthropic's strict mode cannot take, and a set over its per-request budget", Problems: func(in []byte) []string {
		var out []string
		_, _, problems := forms.AnthropicStrict(in)
		for _, p := range problems {
			out = append(out, "not offered in Anthropic's strict mode: "+p)
		}
		return out
	}, SetProblems: func(tools []TargetTool) []string {
		candidates := make([]forms.AnthropicCandidate, len(tools))
		for i, t := range tools {
			candidates[i] = forms.AnthropicCandidate{Name: t.Name, Input: t.Input, Deferred: t.Deferred}
		}
		var strict, past []string
		for i, slot := range forms.AnthropicStrictPlan(candidates) {
			switch {
			case slot.Strict:
				strict = append(strict, tools[i].Name)
			case strings.HasPrefix(slot.Why, "past the budget"):
				past = append(past, tools[i].Name)
			}
		}
		out := []string{fmt.Sprintf("anthropic.Tools with Strict makes %d of %d tools strict (up-front tools first, then deferred, each in name order; Options.StrictFirst puts chosen ones first): %s",
			len(strict), len(tools), orNone(strict))}
		if len(past) > 0 {
			out = append(out, fmt.Sprintf("the set's strict tools exceed Anthropic's per-request budget (%d tools, %d optional and %d union-typed parameters); offered non-strict past it: %s",
				forms.AnthropicStrictTools, forms.AnthropicOptionalParams, forms.AnthropicUnionParams, firstNames(past, 20)))
		}
		return out
	}},
	{Name: "gemini", What: "tool names Gemini refuses, and what its older parameters form says in words or drops", Problems: func(in []byte) []string {
		_, changed, err := forms.GeminiParameters(in)
		if err != nil {
			return []string{err.Error()}
		}
		if len(changed) == 0 {
			return nil
		}
		return []string{"Gemini's parameters form (gemini.Options.OpenAPI, for an API without parametersJsonSchema): " + strings.Join(changed, "; ") + " (keel still validates the schema as generated)"}
	}, NameProblem: forms.GeminiNameProblem},
	{Name: "bedrock", What: "keywords Amazon Nova models on Bedrock refuse (bedrock.Options.PlainSchemas moves them into descriptions)", Problems: func(in []byte) []string {
		if lost := forms.NovaLost(in); len(lost) > 0 {
			return []string{fmt.Sprintf("Amazon Nova takes only type, properties and required at the root: PlainSchemas says %s in descriptions (keel still validates them)", strings.Join(lost, ", "))}
		}
		return nil
	}},
	{Name: "ollama", What: "keywords Ollama's server drops", Problems: func(in []byte) []string {
		if lost := forms.OllamaLost(in); len(lost) > 0 {
			return []string{fmt.Sprintf("Ollama drops %s (the safe form repeats them in descriptions; keel still validates them)", strings.Join(lost, ", "))}
		}
		return nil
	}},
}

// TargetNames lists the names of Targets, comma-separated.
func TargetNames() string {
	names := make([]string, len(Targets))
	for i, t := range Targets {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

func target(name string) (Target, bool) {
	i := slices.IndexFunc(Targets, func(t Target) bool { return t.Name == name })
	if i < 0 {
		return Target{}, false
	}
	return Targets[i], true
}

// targetWarnings reports, at each tool's directive, what a target provider
// cannot take of its input schema.
func targetWarnings(targets []Target, pkg *model.Package, schemas map[string]model.Schemas) []model.Diagnostic {
	var out []model.Diagnostic
	for _, target := range targets {
		var set []TargetTool
		for _, t := range pkg.Tools {
			set = append(set, TargetTool{Name: t.Name, Input: schemas[t.Name].Input, Deferred: t.Deferred})
			if target.NameProblem != nil {
				if p := target.NameProblem(t.Name); p != "" {
					out = append(out, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("warning: %s: %s", t.Name, p)})
				}
			}
			for _, p := range target.Problems(schemas[t.Name].Input) {
				out = append(out, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("warning: %s: %s", t.Name, p)})
			}
		}
		if target.SetProblems != nil && len(pkg.Tools) > 0 {
			for _, p := range target.SetProblems(set) {
				out = append(out, model.Diagnostic{Pos: pkg.Tools[0].Pos, Message: "warning: " + p})
			}
		}
	}
	if len(targets) > 0 {
		// Every target's form takes no $ref: MCP and the providers' plain
		// JSON Schema fields get $defs as generated.
		names := make([]string, len(targets))
		for i, t := range targets {
			names[i] = t.Name
		}
		for _, t := range pkg.Tools {
			if note := forms.RefNote(schemas[t.Name].Input); note != "" {
				out = append(out, model.Diagnostic{Pos: t.Pos, Message: fmt.Sprintf("warning: %s: %s: %s", t.Name, strings.Join(names, ", "), note)})
			}
		}
	}
	return out
}
