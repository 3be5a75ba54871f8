package question

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// A tool's own wording of its question (//keel:approve) is a line of text
// whose {member} placeholders name members of the arguments. keelgen
// checks it when it writes a set, the runtime when it starts one, and
// Render fills it.

// MaxWording bounds a tool's approval wording (//keel:approve): the
// question's first line, not a description.
const MaxWording = 200

var placeholderName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ApproveParts splits an approval wording into literal text and {member}
// placeholders: the parts alternate text, member, text, ..., so a member's
// name is at each odd index. problem says what is wrong with the wording,
// "" when nothing is: empty, past MaxWording, a control character, a brace
// outside a placeholder, a placeholder that is no member name.
func ApproveParts(text string) (parts []string, problem string) {
	switch n := utf8.RuneCountInString(text); {
	case strings.TrimSpace(text) == "":
		return nil, "has no text"
	case n > MaxWording:
		return nil, fmt.Sprintf("is %d characters; the wording is at most %d (the question shows the whole call under it)", n, MaxWording)
	case strings.ContainsFunc(text, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return nil, "holds a control character"
	}
	rest := text
	for {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			return append(parts, rest), ""
		}
		if rest[open] == '}' {
			return nil, "has a } with no { before it; braces only mark {member} placeholders"
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, "has a { with no } after it; braces only mark {member} placeholders"
		}
		name := rest[open+1 : open+end]
		if !placeholderName.MatchString(name) {
			return nil, fmt.Sprintf("has the placeholder {%s}: a placeholder is a member's JSON name, such as {order_id}", name)
		}
		parts = append(parts, rest[:open], name)
		rest = rest[open+end+1:]
	}
}

// ApproveMembers checks that each placeholder of a well-formed wording
// names one of members (the arguments' members: the properties at the
// input schema's root), and returns a problem naming the first that does
// not.
func ApproveMembers(text string, members []string) string {
	parts, problem := ApproveParts(text)
	if problem != "" {
		return problem
	}
	for i := 1; i < len(parts); i += 2 {
		if !slices.Contains(members, parts[i]) {
			return fmt.Sprintf("names {%s}, which is not a member of the arguments (its members: %s)", parts[i], strings.Join(slices.Sorted(slices.Values(members)), ", "))
		}
	}
	return ""
}
