// Package toolrules holds the rules a tool's declaration follows, which
// keelgen checks when it writes a set and the runtime when it verifies
// one: scopes, groups, content types, business codes and the schema
// dialect, its formats held to their RFCs by internal/formats. It is a leaf
// (of keel's packages it imports only that other leaf), so runtime may import it and
// keelgen's stages check the same rules without the runtime exporting them.
package toolrules

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/keelgen/keel/internal/formats"
)

// ExecutorCodes are the executor's own codes, which no business code may
// take (runtime's Code constants; a runtime test keeps the two lists one).
var ExecutorCodes = []string{
	"unknown_tool", "invalid_arguments", "approval_required", "tool_internal_error", "invalid_tool_output",
	"tool_timeout", "tool_cancelled", "insufficient_scope", "rate_limit_exceeded", "refused_message",
	"input_required", "input_unavailable", "call_in_progress", "call_id_reused", "idempotency_unchecked",
}

var businessCode = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// BusinessCode reports whether code is a well-formed business error code:
// snake_case, at most 64 bytes, and not one of the executor's own codes.
func BusinessCode(code string) bool {
	return len(code) <= 64 && businessCode.MatchString(code) && !slices.Contains(ExecutorCodes, code)
}

var decimalText = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// DecimalText reports whether s is decimal text a bound compares
// (formatMinimum, ...): a JSON number literal, as a decimal type writes it.
func DecimalText(s string) bool { return decimalText.MatchString(s) }

var groupName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

// GroupName reports whether g may name a tool group (groups=): lower case,
// like a flag's value a server's operator types.
func GroupName(g string) bool { return groupName.MatchString(g) }

// Scope reports whether s is an OAuth scope token (RFC 6749, 3.3):
// printable ASCII but space, quote and backslash.
func Scope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// ContentType reports whether t may be declared in content=: a
// type/subtype, or type/* for every subtype of one type.
func ContentType(t string) bool {
	top, sub, ok := strings.Cut(t, "/")
	return ok && RestrictedName(top) && (sub == "*" || RestrictedName(sub))
}

// RestrictedName reports whether s is an RFC 6838 restricted-name: a
// letter or digit, then at most 126 of letters, digits and !#$&-^_.+
func RestrictedName(s string) bool {
	if len(s) == 0 || len(s) > 127 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && strings.IndexByte("!#$&-^_.+", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// noLoader refuses every URL: a schema can reach no file and no network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("keel: schema loading is disabled (%s)", url)
}

// ECMARegexp is the validator's regular expression engine: a pattern read
// as ECMA-262 reads it (JSON Schema's patterns are ECMA-262's), run on RE2
// (ECMAPattern), as generated code runs it.
func ECMARegexp(pattern string) (jsonschema.Regexp, error) {
	re, err := CompilePattern(pattern)
	if err != nil {
		return nil, err
	}
	return re, nil
}

// CompileSchema compiles a tool's schema as the executor does (JSON Schema
// 2020-12, formats asserted, nothing loaded), under a private URL named
// after name.
func CompileSchema(name string, doc []byte) (*jsonschema.Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	RegisterFormats(c)
	c.UseRegexpEngine(ECMARegexp)
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

// RegisterFormats has c check the formats keel holds to their RFCs
// (internal/formats) as keel's generated readers do, instead of by the
// validator's own reading.
func RegisterFormats(c *jsonschema.Compiler) {
	for _, f := range formats.All {
		valid := f.Valid
		c.RegisterFormat(&jsonschema.Format{Name: f.Name, Validate: func(v any) error {
			if s, ok := v.(string); ok && !valid(s) {
				return errNotOfFormat
			}
			return nil // a format says nothing of a value that is not a string
		}})
	}
}

var errNotOfFormat = errors.New("not of its format")

// BoundText is m as valid UTF-8, cut at a character boundary to at most
// limit bytes.
func BoundText(m string, limit int) string {
	m = strings.ToValidUTF8(m, "\uFFFD")
	if len(m) <= limit {
		return m
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(m[cut]) {
		cut--
	}
	return m[:cut]
}
