package schemamodel

import "fmt"

// Rule is what each reader of keel's schemas does with one keyword: this
// package's typed reading, the generated code, MCP's elicitation forms, and
// each provider's form. A keyword keel learns is one row here (its typed
// reading too), its planner and its emitted check; the readers ask the row,
// not a list of their own.
type Rule struct {
	Name string
	// Checked: keelgen's generated readers and writers check it; any
	// other keyword but an annotation is a diagnostic at the field.
	Checked bool
	// Bound is how a form that cannot hold the keyword says it in the
	// member's description: "at least 3 characters".
	Bound Bound
	// OpenAI and Anthropic are how their strict modes take it.
	OpenAI, Anthropic Strict
	// Gemini is how Gemini's OpenAPI parameters form (genai.Schema) holds
	// it; GeminiCode is a keyword whose conversion is code of its own
	// (internal/forms' geminiRules).
	Gemini Gemini
	// Form: a member of an MCP elicitation form (its restricted schema)
	// may have it.
	Form bool
	// Patch: a change of it is a patch in the reviewer's diff, words the
	// model reads that constrain nothing; a change of any other keyword is
	// graded as a constraint (major on the arguments).
	Patch bool
	// On are the JSON types of the values generated code checks the
	// keyword on, when not every type's; on another it is a diagnostic.
	On []string
	// Tags are the JSON types of the fields on which the schema reflector
	// (invopop/jsonschema) reads the keyword from a jsonschema tag; it
	// drops it on any other, which keelgen says at the tag.
	Tags []string

	// field is how a typed keyword is read into Schema's member of it,
	// asked after, cleared and written (fields.go); zero for a keyword
	// kept as its raw JSON.
	field field
}

// Bound says a bound in words: Words, the value, then Unit, plural
// past one ("at most", "item": "at most 3 items").
type Bound struct{ Words, Unit string }

// Strict is how a strict mode takes a keyword.
type Strict int

const (
	StrictKeep   Strict = iota // as written
	StrictWords                // moved into the description (Bound)
	StrictRefuse               // no words stand for it: the tool is offered non-strict
	StrictCode                 // the form's own code decides (format, uniqueItems, ...)
)

// Gemini is how Gemini's parameters form holds a keyword.
type Gemini int

const (
	GeminiDrop   Gemini = iota // no member, no words: a note says it was dropped
	GeminiKeep                 // a member of genai.Schema, as written
	GeminiFloat                // a member holding a float64
	GeminiWhole                // a member holding an int64, written whole
	GeminiWords                // said in the description (Bound)
	GeminiCode                 // the form's own code converts it
	GeminiSilent               // an annotation it has no member for and a model no use for
)

// rules are the keywords keel reads as typed members or whose treatment
// differs between readers, in the order With lists them: the bounds in the order a description says them
// (lower before upper), then the rest. A keyword absent here is an
// annotation (IsAnnotation) or one no reader takes: refused by generated
// code, dropped by Gemini, kept as written by the strict modes.
var rules = []Rule{
	{Name: "minimum", Checked: true, Bound: Bound{"at least", ""}, Anthropic: StrictWords, Gemini: GeminiFloat, Form: true, Tags: []string{"number", "integer"}, field: numberField(func(s *Schema) *Number { return &s.Minimum })},
	{Name: "exclusiveMinimum", Checked: true, Bound: Bound{"more than", ""}, Anthropic: StrictWords, Gemini: GeminiWords, Tags: []string{"number", "integer"}, field: numberField(func(s *Schema) *Number { return &s.ExclusiveMinimum })},
	{Name: "maximum", Checked: true, Bound: Bound{"at most", ""}, Anthropic: StrictWords, Gemini: GeminiFloat, Form: true, Tags: []string{"number", "integer"}, field: numberField(func(s *Schema) *Number { return &s.Maximum })},
	{Name: "exclusiveMaximum", Checked: true, Bound: Bound{"less than", ""}, Anthropic: StrictWords, Gemini: GeminiWords, Tags: []string{"number", "integer"}, field: numberField(func(s *Schema) *Number { return &s.ExclusiveMaximum })},
	{Name: "multipleOf", Checked: true, Bound: Bound{"a multiple of", ""}, Anthropic: StrictWords, Gemini: GeminiWords, Tags: []string{"number", "integer"}, field: numberField(func(s *Schema) *Number { return &s.MultipleOf })},
	{Name: "minLength", Checked: true, Bound: Bound{"at least", "character"}, OpenAI: StrictWords, Anthropic: StrictWords, Gemini: GeminiWhole, Form: true, Tags: []string{"string"}, field: numberField(func(s *Schema) *Number { return &s.MinLength })},
	{Name: "maxLength", Checked: true, Bound: Bound{"at most", "character"}, OpenAI: StrictWords, Anthropic: StrictWords, Gemini: GeminiWhole, Form: true, Tags: []string{"string"}, field: numberField(func(s *Schema) *Number { return &s.MaxLength })},
	{Name: "minItems", Checked: true, Bound: Bound{"at least", "item"}, Anthropic: StrictCode, Gemini: GeminiWhole, Tags: []string{"array"}, field: numberField(func(s *Schema) *Number { return &s.MinItems })}, // Anthropic takes 0 and 1
	{Name: "maxItems", Checked: true, Bound: Bound{"at most", "item"}, Anthropic: StrictWords, Gemini: GeminiWhole, Tags: []string{"array"}, field: numberField(func(s *Schema) *Number { return &s.MaxItems })},
	{Name: "minProperties", Checked: true, Bound: Bound{"at least", "member"}, OpenAI: StrictWords, Anthropic: StrictWords, Gemini: GeminiWhole, field: numberField(func(s *Schema) *Number { return &s.MinProperties })},
	{Name: "maxProperties", Checked: true, Bound: Bound{"at most", "member"}, OpenAI: StrictWords, Anthropic: StrictWords, Gemini: GeminiWhole, field: numberField(func(s *Schema) *Number { return &s.MaxProperties })},

	{Name: "type", Checked: true, Gemini: GeminiCode, Form: true, field: typeField},
	{Name: "enum", Checked: true, Gemini: GeminiCode, Form: true, Tags: []string{"string", "number", "integer"}, field: enumField},
	{Name: "const", Checked: true, Gemini: GeminiCode, field: constField},
	{Name: "properties", Checked: true, Gemini: GeminiCode, field: propertiesField},
	{Name: "required", Checked: true, Gemini: GeminiCode, field: requiredField},
	{Name: "additionalProperties", Checked: true, Gemini: GeminiCode, field: schemaField(func(s *Schema) **Schema { return &s.AdditionalProperties })},
	{Name: "items", Checked: true, Gemini: GeminiCode, field: schemaField(func(s *Schema) **Schema { return &s.Items })},
	{Name: "prefixItems", Checked: true, OpenAI: StrictRefuse, Anthropic: StrictRefuse, Gemini: GeminiCode},                                                           // a //keel:tuple's items
	{Name: "oneOf", Checked: true, OpenAI: StrictCode, Anthropic: StrictRefuse, Gemini: GeminiCode, field: listField(func(s *Schema) *[]*Schema { return &s.OneOf })}, // alternatives of required members, said in words first
	{Name: "anyOf", Checked: true, OpenAI: StrictCode, Anthropic: StrictCode, Gemini: GeminiCode, field: listField(func(s *Schema) *[]*Schema { return &s.AnyOf })},
	{Name: "dependentRequired", Checked: true, OpenAI: StrictCode, Anthropic: StrictCode, Gemini: GeminiCode},
	{Name: "pattern", Checked: true, Gemini: GeminiKeep, Tags: []string{"string", "array"}, field: stringField(func(s *Schema) *string { return &s.Pattern })},
	{Name: "format", Checked: true, OpenAI: StrictCode, Anthropic: StrictCode, Gemini: GeminiCode, Form: true, Tags: []string{"string", "array"}, field: stringField(func(s *Schema) *string { return &s.Format })},
	{Name: "uniqueItems", Checked: true, OpenAI: StrictCode, Anthropic: StrictCode, Gemini: GeminiCode, Tags: []string{"array"}, field: uniqueItemsField},

	// A duration's or a decimal text's bounds, compared in its own form
	// (ajv-formats' names).
	{Name: "formatMinimum", Checked: true, OpenAI: StrictCode, Anthropic: StrictCode, Gemini: GeminiCode},
	{Name: "formatExclusiveMinimum", Checked: true, OpenAI: StrictCode, Anthropic: StrictCode, Gemini: GeminiCode},
	{Name: "formatMaximum", Checked: true, OpenAI: StrictCode, Anthropic: StrictCode, Gemini: GeminiCode},
	{Name: "formatExclusiveMaximum", Checked: true, OpenAI: StrictCode, Anthropic: StrictCode, Gemini: GeminiCode},

	// Annotations: genai.Schema has a member for some.
	{Name: "description", Gemini: GeminiKeep, Form: true, Patch: true, field: stringField(func(s *Schema) *string { return &s.Description })},
	{Name: "title", Gemini: GeminiKeep, Form: true, Patch: true, field: stringField(func(s *Schema) *string { return &s.Title })},
	{Name: "default", Gemini: GeminiKeep, Form: true, Patch: true, Tags: []string{"string", "number", "integer", "array", "boolean"}},
	{Name: "example", Gemini: GeminiKeep, Tags: []string{"string", "number", "integer"}},
	{Name: "examples", Gemini: GeminiSilent, Patch: true},
	{Name: "$comment", Gemini: GeminiSilent, Patch: true},
	{Name: "$schema", Gemini: GeminiSilent},
	{Name: "$id", Gemini: GeminiSilent},

	// Annotations of a []byte's text, kept as written by every form.
	{Name: "contentEncoding", field: stringField(func(s *Schema) *string { return &s.ContentEncoding })},
	{Name: "contentMediaType", field: stringField(func(s *Schema) *string { return &s.ContentMediaType })},

	// Annotations the reflector reads from a string field's tag.
	{Name: "readOnly", Tags: []string{"string"}},
	{Name: "writeOnly", Tags: []string{"string"}},

	// Keywords no generated code checks and no strict mode takes.
	{Name: "patternProperties", OpenAI: StrictRefuse, Anthropic: StrictRefuse},
	{Name: "propertyNames", OpenAI: StrictRefuse, Anthropic: StrictRefuse},
	{Name: "unevaluatedProperties", OpenAI: StrictRefuse, Anthropic: StrictRefuse},
	{Name: "unevaluatedItems", OpenAI: StrictRefuse, Anthropic: StrictRefuse},
	{Name: "contains", OpenAI: StrictRefuse, Anthropic: StrictRefuse},
	{Name: "minContains", OpenAI: StrictRefuse, Anthropic: StrictRefuse},
	{Name: "maxContains", OpenAI: StrictRefuse, Anthropic: StrictRefuse},
	{Name: "allOf", OpenAI: StrictRefuse, Anthropic: StrictRefuse, field: listField(func(s *Schema) *[]*Schema { return &s.AllOf })},
	{Name: "not", Checked: true, OpenAI: StrictRefuse, Anthropic: StrictRefuse, Gemini: GeminiCode, On: []string{"string"}, field: schemaField(func(s *Schema) **Schema { return &s.Not })}, // a string's reserved values: not {enum} or {const}, which the strict forms and Gemini's say in words; any other not the strict forms refuse
	{Name: "if", OpenAI: StrictRefuse, Anthropic: StrictRefuse},
	{Name: "then", OpenAI: StrictRefuse, Anthropic: StrictRefuse},
	{Name: "else", OpenAI: StrictRefuse, Anthropic: StrictRefuse},
	{Name: "dependentSchemas", OpenAI: StrictRefuse, Anthropic: StrictRefuse},
}

// RuleOf is keyword's rule; the zero Rule for one no reader takes.
func RuleOf(keyword string) Rule { return ruleByName[keyword] }

var ruleByName = func() map[string]Rule {
	m := make(map[string]Rule, len(rules))
	for _, r := range rules {
		m[r.Name] = r
	}
	return m
}()

// Said is keyword's bound of value v in words ("at most 3 items"), or ""
// for a keyword that is no bound.
func Said(keyword, v string) string {
	b := RuleOf(keyword).Bound
	if b.Words == "" {
		return ""
	}
	if b.Unit == "" {
		return fmt.Sprintf("%s %s", b.Words, v)
	}
	unit := b.Unit
	if v != "1" {
		unit += "s"
	}
	return fmt.Sprintf("%s %s %s", b.Words, v, unit)
}

// With lists, in the rules' order, the keywords whose rule passes ok.
func With(ok func(Rule) bool) []string {
	var out []string
	for _, r := range rules {
		if ok(r) {
			out = append(out, r.Name)
		}
	}
	return out
}
