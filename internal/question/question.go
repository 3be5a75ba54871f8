// Package question renders what a person reads to approve one call: the
// tool and the whole call, from its checked arguments, the same text in
// every place a person reads it (an MCP elicitation, a task's input
// request, the approval page, a harness's ApprovalRequest).
//
// The arguments are the ones the executor's strict reader accepted (one
// JSON object, no member twice, valid UTF-8), so the text is built from
// their structure, never from their bytes' layout: every member is shown,
// nested members indented, each string quoted with every control, bidi,
// invisible, separator and private-use character escaped visibly
// (\u202E), never rendered. Render shows every value whole: a long one
// with its size and digest beside it, and text of several lines (a patch,
// a SQL statement, an email) as a block of its lines. Brief is the same
// question for a place that must be short: a value past its bound is
// shown as its start, its size and a digest of the whole, and the text
// says so. Two calls with different arguments never read the same.
package question

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Brief's bound on items (of one array, or of one object's members), and
// the length past which Render gives a string's size and digest beside
// it.
const (
	maxItems    = 50
	longStrings = 200
)

// DefaultBrief is Brief's usual bound on one string's characters.
const DefaultBrief = 1000

// Tool is what the question says of the tool.
type Tool struct {
	Name, Title, Version string
	// Approve is the tool's own wording (//keel:approve), its {member}
	// placeholders filled from the call: shown above the whole call,
	// never instead of it.
	Approve string
	// Input says which members are sensitive (writeOnly): shown as set,
	// with their length, never their value. Nil: none is.
	Input Schema
}

// Render is the question for a call of tool with args (the strict
// reader's accepted arguments; none is {}), every value whole. A value it
// cannot read (not the reader's) is shown by its size and digest, never as
// it is.
func Render(tool Tool, args []byte) string {
	return render(tool, args, 0)
}

// Brief is Render for a place that must be short (an MCP client's
// message): each string past maxChars characters (DefaultBrief when 0 or
// less), and each list or object past 50 items, is shown by its start, its
// size and its digest, and the text says so; cut reports whether any was.
func Brief(tool Tool, args []byte, maxChars int) (text string, cut bool) {
	if maxChars <= 0 {
		maxChars = DefaultBrief
	}
	text = render(tool, args, maxChars)
	return text, strings.Contains(text, briefNote)
}

// briefNote ends a question Brief cut.
const briefNote = "Some values are too long to show here: each is shown by its start, its size and a digest (sha256) of the whole. The approval is for the whole call."

// render renders the question; maxChars > 0 bounds strings and lists.
func render(tool Tool, args []byte, maxChars int) string {
	var b strings.Builder
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	b.WriteString("Approve this call?\n\n")
	schema := tool.Input
	if tool.Approve != "" {
		b.WriteString(wording(tool.Approve, args, schema))
		b.WriteString("\n\n")
	}
	b.WriteString("Tool: ")
	if tool.Title != "" && tool.Title != tool.Name {
		b.WriteString(escape(tool.Title))
		b.WriteString(" (")
		b.WriteString(tool.Name)
		b.WriteString(", version ")
	} else {
		b.WriteString(tool.Name)
		b.WriteString(" (version ")
	}
	b.WriteString(tool.Version)
	b.WriteString(")\nArguments:")
	r := renderer{b: &b, args: args, maxRunes: maxChars}
	if maxChars > 0 {
		r.maxItems = maxItems
	}
	dec := jsontext.NewDecoder(bytes.NewReader(args))
	if err := r.value(dec, 1, schema); err != nil {
		return unreadable(tool, args)
	}
	if r.bounded {
		b.WriteString("\n\n" + briefNote)
	}
	b.WriteString("\n\nA yes lets this one call run once, with exactly these arguments.")
	return b.String()
}

// unreadable is the question for arguments the renderer cannot read.
func unreadable(tool Tool, args []byte) string {
	return fmt.Sprintf("Approve this call?\n\nTool: %s (version %s)\nArguments: %d bytes that cannot be shown (sha256 %s).\n\nA yes lets this one call run once, with exactly these arguments.",
		tool.Name, tool.Version, len(args), digest(args))
}

type renderer struct {
	b        *strings.Builder
	args     []byte
	maxRunes int  // of one string; 0 shows every string whole
	maxItems int  // of one list or object; 0 shows every item
	bounded  bool // a value was shown by its start and digest
}

// value writes the next value of dec after a "name:" (or "-") at depth;
// s is its subschema (nil when the schema says nothing of it).
func (r *renderer) value(dec *jsontext.Decoder, depth int, s Schema) error {
	if sensitive(s) {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		r.b.WriteByte(' ')
		r.b.WriteString(masked(v))
		return nil
	}
	switch dec.PeekKind() {
	case '{':
		return r.object(dec, depth, s)
	case '[':
		return r.array(dec, depth, s)
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() == '"' && strings.ContainsRune(tok.String(), '\n') {
		r.lines(tok.String(), depth)
		return nil
	}
	r.b.WriteByte(' ')
	switch tok.Kind() {
	case '"':
		r.b.WriteString(r.quote(tok.String()))
	default: // a number as written (the reader checked it), true, false, null
		r.b.WriteString(tok.String())
	}
	return nil
}

func (r *renderer) object(dec *jsontext.Decoder, depth int, s Schema) error {
	start := dec.InputOffset()
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	if dec.PeekKind() == '}' {
		dec.ReadToken()
		r.b.WriteString(" {}")
		return nil
	}
	n := 0
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if n == r.maxItems && n > 0 {
			return r.rest(dec, '}', start, depth, n, "members")
		}
		n++
		r.newline(depth)
		key := name.String()
		r.b.WriteString(memberName(key))
		r.b.WriteByte(':')
		if err := r.value(dec, depth+1, member(s, key)); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

func (r *renderer) array(dec *jsontext.Decoder, depth int, s Schema) error {
	start := dec.InputOffset()
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	if dec.PeekKind() == ']' {
		dec.ReadToken()
		r.b.WriteString(" []")
		return nil
	}
	n := 0
	for dec.PeekKind() != ']' {
		if n == r.maxItems && n > 0 {
			return r.rest(dec, ']', start, depth, n, "items")
		}
		n++
		r.newline(depth)
		r.b.WriteByte('-')
		if err := r.value(dec, depth+1, items(s)); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// rest skips what is left of a container past maxItems (for an object,
// its next name was read) and says how much there was, with the digest of
// the whole container, which began at start.
func (r *renderer) rest(dec *jsontext.Decoder, end jsontext.Kind, start int64, depth, shown int, what string) error {
	more := 0
	for {
		if err := dec.SkipValue(); err != nil {
			return err
		}
		more++
		if dec.PeekKind() == end {
			break
		}
		if end == '}' {
			if _, err := dec.ReadToken(); err != nil { // the next name
				return err
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	whole := jsontext.Value(bytes.Clone(bytes.TrimLeft(r.args[start:dec.InputOffset()], " \t\r\n,:"))) // Compact works in place: never on the call's bytes
	if err := whole.Compact(); err != nil {
		return err
	}
	r.bounded = true
	r.newline(depth)
	fmt.Fprintf(r.b, "… %d more %s, %d in all (sha256 of the whole: %s)", more, what, shown+more, digest(whole))
	return nil
}

func (r *renderer) newline(depth int) {
	r.b.WriteByte('\n')
	for range depth {
		r.b.WriteString("  ")
	}
}

// quote is s as the question shows a string: quoted, escaped, and either
// whole (a long one with its size and digest beside it) or bounded.
func (r *renderer) quote(s string) string {
	if i, cut := r.cutAt(s); cut {
		r.bounded = true
		return fmt.Sprintf("%s… (%d characters in all; sha256 %s)", escape(s[:i]), utf8.RuneCountInString(s), digest([]byte(s)))
	}
	if n := utf8.RuneCountInString(s); n > longStrings {
		return fmt.Sprintf("%s (%d characters; sha256 %s)", escape(s), n, digest([]byte(s)))
	}
	return escape(s)
}

// cutAt is where s is cut under the renderer's bound: the byte offset of
// its first rune past maxRunes, and whether there is one.
func (r *renderer) cutAt(s string) (int, bool) {
	if r.maxRunes == 0 {
		return len(s), false
	}
	return cutRunes(s, r.maxRunes)
}

// cutRunes is the byte offset of s's first rune past n, and whether there
// is one.
func cutRunes(s string, n int) (int, bool) {
	runes := 0
	for i := range s {
		if runes == n {
			return i, true
		}
		runes++
	}
	return len(s), false
}

// briefLines bounds the lines Brief shows of one text; emptyRun is the
// shortest run of empty lines shown as their count.
const (
	briefLines = 40
	emptyRun   = 3
)

// lines shows text of several lines as they are: a line that says how
// many, whether a line break ends it, its size and its digest, then each
// line after a bar, one level in, escaped as a string is (a backslash too,
// so no line can forge an escape) and with a space or tab at its end
// escaped, so none is invisible; a run of empty lines, which could push a
// line out of sight, is one line that counts them. No line of the text
// reads as either: each of its lines starts with the bar. Under a bound,
// the lines stop at it, counted as they are shown.
func (r *renderer) lines(s string, depth int) {
	text := strings.TrimSuffix(s, "\n")
	ending := ""
	if len(text) < len(s) {
		ending = ", ending in a line break"
	}
	fmt.Fprintf(r.b, " text of %d lines%s (%d characters; sha256 %s):", strings.Count(text, "\n")+1, ending, utf8.RuneCountInString(s), digest([]byte(s)))
	all := strings.Split(text, "\n")
	budget, shown, cut := r.maxRunes, 0, false
	for i := 0; i < len(all); {
		if r.maxRunes > 0 && (budget <= 0 || shown == briefLines) {
			cut = true
			break
		}
		r.newline(depth)
		shown++
		if n := emptyLines(all[i:]); n >= emptyRun {
			fmt.Fprintf(r.b, "(%d empty lines)", n)
			i, budget = i+n, budget-len("(000 empty lines)")
			continue
		}
		line := all[i]
		i++
		if r.maxRunes > 0 {
			if j, over := cutRunes(line, budget); over {
				line, cut = line[:j], true
			}
			budget -= utf8.RuneCountInString(line)
		}
		r.b.WriteString("| ")
		trimmed := strings.TrimRight(line, " \t")
		escapeInto(r.b, trimmed, false, true)
		for _, c := range line[len(trimmed):] {
			fmt.Fprintf(r.b, `\u%04X`, c)
		}
		if cut {
			break
		}
	}
	if cut {
		r.bounded = true
		r.newline(depth)
		r.b.WriteString("(… the rest is cut here)")
	}
}

// emptyLines counts the empty lines lines begins with.
func emptyLines(lines []string) int {
	n := 0
	for n < len(lines) && lines[n] == "" {
		n++
	}
	return n
}

// memberName is a member's name as shown: bare when it is a plain name,
// else quoted and escaped as a string is.
func memberName(name string) string {
	for i, c := range name {
		plain := c == '_' || c == '-' || c == '.' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (i > 0 && '0' <= c && c <= '9')
		if !plain {
			return escape(name)
		}
	}
	if name == "" {
		return `""`
	}
	return name
}

// escape quotes s, escaping every character a person could misread: the
// quote and backslash, line ends and tabs, C0 and C1 controls, and every
// format (bidi, zero-width, BOM, tags), separator other than the space,
// private-use and invisible filler character, as \uXXXX (or \U+XXXXX).
func escape(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	escapeInto(&b, s, true, true)
	b.WriteByte('"')
	return b.String()
}

// escapeBare is s with every hidden character escaped, unquoted: the
// author's own text, whose quotes are its own.
func escapeBare(s string) string {
	var b strings.Builder
	escapeInto(&b, s, false, false)
	return b.String()
}

// escapeInto writes s with every hidden character escaped; quotes and
// backslashes too when asked (a quoted string's quotes; a line's
// backslashes, so that no text forges an escape).
func escapeInto(b *strings.Builder, s string, quotes, backslashes bool) {
	for _, c := range s {
		switch {
		case quotes && c == '"':
			b.WriteString(`\"`)
		case backslashes && c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case hidden(c):
			if c > 0xFFFF {
				fmt.Fprintf(b, `\U+%05X`, c)
			} else {
				fmt.Fprintf(b, `\u%04X`, c)
			}
		default:
			b.WriteRune(c)
		}
	}
}

// hidden reports whether c renders as nothing, as something else, or
// changes how the text around it renders.
func hidden(c rune) bool {
	switch {
	case c < 0x20 || (0x7F <= c && c <= 0x9F): // C0, DEL, C1
		return true
	case c == ' ':
		return false
	case unicode.In(c, unicode.Cf, unicode.Zs, unicode.Zl, unicode.Zp, unicode.Co, unicode.Cs):
		return true // bidi controls, zero-width characters, tags, BOM; other spaces; U+2028/9; private use
	case 0xFE00 <= c && c <= 0xFE0F, 0xE0100 <= c && c <= 0xE01EF: // variation selectors
		return true
	case c == 0x034F, c == 0x115F, c == 0x1160, c == 0x3164, c == 0xFFA0, c == 0x2800: // a joiner, fillers and a blank that show nothing
		return true
	case c == utf8.RuneError:
		return true
	}
	return !unicode.IsPrint(c) && !unicode.IsGraphic(c)
}

// wording is the tool's own words with each {member} filled from the
// call's arguments: a plain value (a number, a word of letters, digits and
// -_.:/@+#) as it is, any other string quoted and escaped as in the call,
// an object or a list by its kind and size, a member not sent as (not
// set). Every value is bounded; the author's text is escaped too.
func wording(template string, args []byte, schema Schema) string {
	parts, problem := ApproveParts(template)
	if problem != "" {
		return escapeBare(template)
	}
	members := map[string]jsontext.Value{}
	dec := jsontext.NewDecoder(bytes.NewReader(args))
	if tok, err := dec.ReadToken(); err == nil && tok.Kind() == '{' {
		for dec.PeekKind() == '"' {
			tok, _ := dec.ReadToken()
			name := tok.String() // before the next read voids the token
			v, err := dec.ReadValue()
			if err != nil {
				break
			}
			members[name] = v.Clone()
		}
	}
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 0 {
			b.WriteString(escapeBare(p))
			continue
		}
		if v, ok := members[p]; ok && sensitive(member(schema, p)) {
			b.WriteString(masked(v))
			continue
		}
		b.WriteString(filled(members[p]))
	}
	return b.String()
}

var plainValue = regexp.MustCompile(`^[\p{L}\p{N}._:/@+#-]{1,64}$`)

// filled is one member's value as the wording shows it.
func filled(v jsontext.Value) string {
	switch v.Kind() {
	case 0:
		return "(not set)"
	case '{':
		return "(an object)"
	case '[':
		n := 0
		dec := jsontext.NewDecoder(bytes.NewReader(v))
		dec.ReadToken()
		for dec.PeekKind() != ']' && dec.SkipValue() == nil {
			n++
		}
		return fmt.Sprintf("(a list of %d)", n)
	case '"':
		var s string
		if u, err := jsontext.AppendUnquote(nil, v); err == nil {
			s = string(u)
		}
		if plainValue.MatchString(s) && !strings.ContainsFunc(s, hidden) {
			return s
		}
		if utf8.RuneCountInString(s) > maxWordingRunes {
			return escape(string([]rune(s)[:maxWordingRunes])) + "…"
		}
		return escape(s)
	}
	return string(v) // a number as sent, true, false, null
}

// masked is a sensitive value as a person reads it: that it is set, and
// its length (a string's characters, a list's items), never what it is.
func masked(v jsontext.Value) string {
	switch v.Kind() {
	case '"':
		if u, err := jsontext.AppendUnquote(nil, v); err == nil {
			return fmt.Sprintf("(sensitive: set, %d characters)", utf8.RuneCount(u))
		}
	case 'n':
		return "(sensitive: null)"
	}
	return "(sensitive: set)"
}

// maxWordingRunes bounds a string filled into the wording; the call below
// shows it whole.
const maxWordingRunes = 64

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}
