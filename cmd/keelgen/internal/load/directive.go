package load

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/keelgen/keel/internal/toolrules"
	"github.com/keelgen/keel/runtime"
)

const (
	directivePrefix = "//keel:tool"
	paramPrefix     = "//keel:param"
	titlePrefix     = "//keel:title"
	approvePrefix   = "//keel:approve"
)

// toolNameRule is the one rule every model provider accepts.
var toolNameRule = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// versionRule: one to three dotted numbers without leading zeros, e.g. 1,
// 1.0, 1.2.3: a semantic version with missing parts counting as 0.
var versionRule = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*)){0,2}$`)

// nearMiss matches comments that look like a keel directive but are not one
// exactly: "// keel:tool", "//keel: tool", "//Keel:tool", "//keel:tools".
var nearMiss = regexp.MustCompile(`(?i)^(//|/\*)\s*keel\s*:`)

// directive is a parsed //keel:tool line.
type directive struct {
	name, version, effect string
	timeout               time.Duration
	errors                []string
	hints                 runtime.Hints
	content               []string // MIME types of content blocks (content=)
	scopes                []string // OAuth scopes a caller's credentials must grant (scopes=)
	groups                []string // tool groups it belongs to (groups=)
	laxNumbers            bool     // lax=numbers
	noTextCopy            bool     // text=none
}

// maxTimeout bounds timeout=; a longer tool call is a job, not a tool.
const maxTimeout = time.Hour

// isDirective reports whether a comment line is exactly a //keel:tool directive.
func isDirective(text string) bool { return isKeyword(text, directivePrefix) }

// isParam reports whether a comment line is a //keel:param line.
func isParam(text string) bool { return isKeyword(text, paramPrefix) }

// isTitle reports whether a comment line is a //keel:title line.
func isTitle(text string) bool { return isKeyword(text, titlePrefix) }

// isApprove reports whether a comment line is a //keel:approve line.
func isApprove(text string) bool { return isKeyword(text, approvePrefix) }

func isKeyword(text, prefix string) bool {
	rest, ok := strings.CutPrefix(text, prefix)
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
}

// parseParam reads "//keel:param name text": the parameter's name (Go or
// JSON) and its description for the model.
func parseParam(text string) (name, description string) {
	rest := strings.TrimSpace(text[len(paramPrefix):])
	name, description, _ = strings.Cut(rest, " ")
	return name, strings.TrimSpace(description)
}

// classifyComment returns a problem for a comment line that is almost, but
// not, a directive; "" for ordinary comments and real directives.
func classifyComment(text string) string {
	if isDirective(text) || isParam(text) || isTitle(text) || isApprove(text) || isIcon(text) || isMeta(text) || isTextDirective(text) || isTupleDirective(text) || isUnionDirective(text) || !nearMiss.MatchString(text) {
		return ""
	}
	if rest, ok := strings.CutPrefix(text, "//keel:"); ok && rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return fmt.Sprintf("unknown directive //keel:%s (keel's directives are //keel:tool, //keel:param, //keel:title, //keel:approve, //keel:icon, //keel:meta, //keel:text and //keel:tuple)", strings.Fields(rest)[0])
	}
	return fmt.Sprintf("malformed directive %q: write exactly //keel:tool, //keel:param, //keel:title, //keel:approve, //keel:icon, //keel:meta, //keel:text or //keel:tuple (lower case, no spaces)", directiveWords(text))
}

// directiveWords is the directive part of a near miss, without its keys.
func directiveWords(text string) string {
	var words []string
	for _, w := range strings.Fields(text) {
		if strings.Contains(w, "=") || w == "*/" {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// parseDirective reads "name=... version=... effect=..." and returns every
// problem it finds.
func parseDirective(text string) (directive, []string) {
	var d directive
	pairs, problems := keyValues(strings.Fields(text[len(directivePrefix):]), "//keel:tool: ")
	seen := map[string]bool{}
	var err error
	for _, kv := range pairs {
		key, value := kv.key, kv.value
		seen[key] = true
		switch key {
		case "name":
			d.name = value
			if !toolNameRule.MatchString(value) {
				problems = append(problems, fmt.Sprintf("//keel:tool: name %q must match ^[a-zA-Z0-9_-]{1,64}$", value))
			}
		case "version":
			d.version = value
			if !versionRule.MatchString(value) {
				problems = append(problems, fmt.Sprintf("//keel:tool: version %q must be one to three dotted numbers without leading zeros, like 1.0 or 1.2.3", value))
			}
		case "effect":
			d.effect = value
			if value != "read" && value != "write" {
				problems = append(problems, fmt.Sprintf("//keel:tool: effect %q must be read or write", value))
			}
		case "timeout":
			d.timeout, err = time.ParseDuration(value)
			if err != nil || d.timeout <= 0 || d.timeout > maxTimeout {
				problems = append(problems, fmt.Sprintf("//keel:tool: timeout %q must be a duration between 1ns and 1h, like 2s or 500ms", value))
			}
		case "errors":
			problems = append(problems, d.parseErrors(value)...)
		case "content":
			problems = append(problems, d.parseContent(value)...)
		case "scopes":
			problems = append(problems, d.parseScopes(value)...)
		case "groups":
			var more []string
			d.groups, more = parseList(value, "group", toolrules.GroupName, "must match ^[a-z][a-z0-9_-]{0,63}$, like dashboards or read_only")
			problems = append(problems, more...)
		case "destructive", "idempotent":
			b, ok := map[string]bool{"true": true, "false": false}[value]
			if !ok {
				problems = append(problems, fmt.Sprintf("//keel:tool: %s %q must be true or false", key, value))
				continue
			}
			if key == "destructive" {
				d.hints.Destructive = &b
			} else {
				d.hints.Idempotent = &b
			}
		case "lax":
			if value != "numbers" {
				problems = append(problems, fmt.Sprintf("//keel:tool: lax %q: the one lax reading is lax=numbers (an integer or number member also read from a numeric string, an integer from an integral 2.0)", value))
				continue
			}
			d.laxNumbers = true
		case "text":
			if value != "none" {
				problems = append(problems, fmt.Sprintf("//keel:tool: text %q: the one text choice is text=none (no JSON copy of the result in MCP's text block for a client of the 2026-07-28 revision; else a result type's MCPText method, else the JSON)", value))
				continue
			}
			d.noTextCopy = true
		case "world":
			open, ok := map[string]bool{"open": true, "closed": false}[value]
			if !ok {
				problems = append(problems, fmt.Sprintf("//keel:tool: world %q must be open (the tool may reach beyond the process) or closed", value))
				continue
			}
			d.hints.OpenWorld = &open
		default:
			problems = append(problems, fmt.Sprintf("//keel:tool: unknown key %q (keys are name, version, effect, timeout, errors, content, scopes, groups, destructive, idempotent, world, lax, text)", key))
		}
	}
	for _, key := range []string{"name", "version", "effect"} {
		if !seen[key] {
			problems = append(problems, fmt.Sprintf("//keel:tool: missing required key %q", key))
		}
	}
	if d.effect == "read" && d.hints.Destructive != nil {
		problems = append(problems, "//keel:tool: destructive is a write's hint; a read destroys nothing")
	}
	return d, problems
}

// keyValue is one key=value field of a directive.
type keyValue struct{ key, value string }

// keyValues splits a directive's fields into key=value pairs, in order, and
// reports (after prefix) each field that is not one and each key given twice.
func keyValues(fields []string, prefix string) ([]keyValue, []string) {
	var pairs []keyValue
	var problems []string
	seen := map[string]bool{}
	for _, field := range fields {
		key, value, ok := strings.Cut(field, "=")
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s%q is not key=value", prefix, field))
		case seen[key]:
			problems = append(problems, fmt.Sprintf("%skey %q given twice", prefix, key))
		default:
			seen[key] = true
			pairs = append(pairs, keyValue{key, value})
		}
	}
	return pairs, problems
}

// parseScopes reads scopes=ops:write,ops:read: the OAuth scopes (RFC 6749,
// 3.3) a caller's credentials must all grant.
func (d *directive) parseScopes(value string) []string {
	var problems []string
	d.scopes, problems = parseList(value, "scope", toolrules.Scope, "is not an OAuth scope (printable ASCII, no space, quote or backslash)")
	return problems
}

// parseContent reads content=image/png,text/*: the MIME types of content
// blocks a handler returning runtime.WithContent may return.
func (d *directive) parseContent(value string) []string {
	var problems []string
	d.content, problems = parseList(value, "content type", toolrules.ContentType, "must be a MIME type such as image/png, or type/* such as image/*")
	return problems
}

// parseList reads a comma-separated list of what, each valid and listed
// once, sorted; invalid says why one is not.
func parseList(value, what string, valid func(string) bool, invalid string) (list, problems []string) {
	for _, v := range strings.Split(value, ",") {
		switch {
		case slices.Contains(list, v):
			problems = append(problems, fmt.Sprintf("//keel:tool: %s %q listed twice", what, v))
		case !valid(v):
			problems = append(problems, fmt.Sprintf("//keel:tool: %s %q %s", what, v, invalid))
		default:
			list = append(list, v)
		}
	}
	sort.Strings(list)
	return list, problems
}

// parseErrors reads errors=code1,code2: the business error codes a handler
// may return, each snake_case and none of the executor's own.
func (d *directive) parseErrors(value string) []string {
	var problems []string
	seen := map[string]bool{}
	for _, code := range strings.Split(value, ",") {
		switch {
		case seen[code]:
			problems = append(problems, fmt.Sprintf("//keel:tool: error code %q listed twice", code))
		case slices.Contains(toolrules.ExecutorCodes, code):
			problems = append(problems, fmt.Sprintf("//keel:tool: error code %q is the executor's own; declare only the handler's business codes", code))
		case !toolrules.BusinessCode(code):
			problems = append(problems, fmt.Sprintf("//keel:tool: error code %q must be snake_case, like incident_not_found", code))
		default:
			d.errors = append(d.errors, code)
		}
		seen[code] = true
	}
	sort.Strings(d.errors)
	return problems
}
