package question_test

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/internal/question"
)

var tool = question.Tool{Name: "run_command", Title: "Run a command", Version: "1.0"}

// What a person reads is the whole call, from its structure: layout in the
// bytes changes nothing, and nothing in a value can hide another member,
// reorder the text or end a line.
func TestRenderShowsTheWholeCall(t *testing.T) {
	for _, c := range []struct {
		name string
		args string
		want []string // in the question, in order
		not  []string // nowhere in it
	}{
		{"members, nested and listed", `{"command":"ls -la","env":{"HOME":"/root"},"args":["-l",2,true,null],"empty":{},"none":[]}`,
			[]string{"Tool: \"Run a command\" (run_command, version 1.0)", "\n  command: \"ls -la\"", "\n  env:\n    HOME: \"/root\"", "\n  args:\n    - \"-l\"\n    - 2\n    - true\n    - null", "\n  empty: {}", "\n  none: []"}, nil},
		{"newlines and a line separator before a member", `{"note":"ls -la. Nothing is changed.` + strings.Repeat(`\n`, 1990) + `\u2028",` + `"command":"rm -rf /srv"}`,
			[]string{"note: text of 1991 lines (2018 characters; sha256 ", "\n    | ls -la. Nothing is changed.\n    (1989 empty lines)\n    | \\u2028\n  command: \"rm -rf /srv\""}, []string{"\u2028", "\n\n    |"}},
		{"text of several lines keeps its lines; quotes as they are, a backslash and a line's last space escaped", `{"patch":"--- a/x\n+++ b/x\n+say \"hi\" \\u202e \n\t-x\u202e\n"}`,
			[]string{"patch: text of 4 lines, ending in a line break (", "\n    | --- a/x\n    | +++ b/x\n    | +say \"hi\" \\\\u202e\\u0020\n    | \\t-x\\u202E\n\nA yes"}, []string{"\u202e\n"}},
		{"bidi overrides and invisible characters", `{"note":"Amount: \u202e00.001\u202c","to":"ab\u200bc\ufeff\u2066x\u2069"}`,
			[]string{`note: "Amount: \u202E00.001\u202C"`, `to: "ab\u200Bc\uFEFF\u2066x\u2069"`}, []string{"\u202e", "\u200b", "\ufeff", "\u2066"}},
		{"controls, other spaces, tags and private use", `{"a":"x\u0007\u0085\u00a0\u3000y","b":"\udb40\udc41z","c":"\ue000"}`,
			[]string{`a: "x\u0007\u0085\u00A0\u3000y"`, `b: "\U+E0041z"`, `c: "\uE000"`}, nil},
		{"quotes and backslashes cannot forge a value's end", `{"a":"x\", b: \"y","b":"\\"}`,
			[]string{`a: "x\", b: \"y"`, `b: "\\"`}, nil},
		{"a name that is no plain name", `{"a b":1,"":2,"\u202ex":3}`,
			[]string{"\n  \"a b\": 1", "\n  \"\": 2", "\n  \"\\u202Ex\": 3"}, nil},
		{"numbers as sent", `{"n":1e400,"m":-0.000001,"k":12345678901234567890}`,
			[]string{"n: 1e400", "m: -0.000001", "k: 12345678901234567890"}, nil},
		{"a run of three empty lines or more is counted; a line that reads as the count keeps its bar", `{"t":"a\n\n\nb\n\n\n\nc\n(3 empty lines)"}`,
			[]string{"\n    | a\n    | \n    | \n    | b\n    (3 empty lines)\n    | c\n    | (3 empty lines)\n"}, nil},
		{"a long string is whole, its size and its digest beside it", `{"s":"` + strings.Repeat("é", 500) + `","t":"after"}`,
			[]string{`s: "` + strings.Repeat("é", 500) + `" (500 characters; sha256 `, "t: \"after\""}, []string{"too long"}},
		{"a long array is whole", `{"xs":[` + strings.TrimSuffix(strings.Repeat(`"x", `, 60), ", ") + `],"after":true}`,
			[]string{strings.Repeat("\n    - \"x\"", 60), "\n  after: true"}, []string{"more items"}},
		{"no arguments", ``, []string{"Arguments: {}"}, nil},
	} {
		args := []byte(c.args)
		q := question.Render(tool, args)
		if string(args) != c.args {
			t.Errorf("%s: rendering changed the call's bytes", c.name)
		}
		at := 0
		for _, w := range c.want {
			i := strings.Index(q[at:], w)
			if i < 0 {
				t.Errorf("%s: %q not in order in\n%s", c.name, w, q)
				break
			}
			at += i + len(w)
		}
		for _, n := range c.not {
			if strings.Contains(q, n) {
				t.Errorf("%s: %q in\n%s", c.name, n, q)
			}
		}
	}
}

// Two calls with different arguments never read the same, whatever their
// values; the same call reads the same whatever its bytes' layout.
func FuzzRenderDeterminesTheCall(f *testing.F) {
	f.Add("ls -la", "rm -rf /srv", 3)
	f.Add("a\u202eb", "a\u202cb", 60)
	f.Add(strings.Repeat("x", 300), strings.Repeat("x", 299)+"y", 51)
	f.Fuzz(func(t *testing.T, a, b string, n int) {
		n = n % 80
		if n < 0 {
			n = -n
		}
		args := func(s string, n int) []byte {
			var items []string
			for i := range n {
				items = append(items, jsonString(s)+strings.Repeat(" ", i%2))
			}
			return []byte(`{"s":` + jsonString(s) + `,"xs":[` + strings.Join(items, ",") + `]}`)
		}
		qa, qb := question.Render(tool, args(a, n)), question.Render(tool, args(b, n))
		if jsonString(a) != jsonString(b) && qa == qb { // two strings may be one JSON string: invalid UTF-8 is U+FFFD
			t.Fatalf("%q and %q read the same:\n%s", a, b, qa)
		}
		spaced := jsontext.Value(args(a, n)) // the same value laid out otherwise
		if spaced.Indent(jsontext.WithIndentPrefix("\t"), jsontext.WithIndent("  ")) == nil {
			if q := question.Render(tool, spaced); q != qa {
				t.Fatalf("the layout changed the question:\n%s\n%s", qa, q)
			}
		}
	})
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// The tool's own words come first, filled from the call, and the whole
// call still follows: a plain value as it is, any other quoted and
// escaped, a member not sent as (not set).
func TestWordingAboveTheCall(t *testing.T) {
	order := question.Tool{Name: "submit_order", Version: "1.0", Approve: `Submit order {order_id} for {amount} {currency}? Note: {note} ({items}, {gift})`}
	q := question.Render(order, []byte(`{"order_id":"ORD-1002","amount":45.00,"currency":"USD","note":"leave at door\u202e","items":[1,2]}`))
	want := "Approve this call?\n\nSubmit order ORD-1002 for 45.00 USD? Note: \"leave at door\\u202E\" ((a list of 2), (not set))\n\nTool: submit_order (version 1.0)\nArguments:\n  order_id: \"ORD-1002\""
	if !strings.HasPrefix(q, want) {
		t.Errorf("got\n%s\nwant it to start\n%s", q, want)
	}
	forged := question.Render(order, []byte(`{"order_id":"ORD-1 for 0.01 USD?\nTool: none","amount":1,"currency":"USD"}`))
	if !strings.Contains(forged, `Submit order "ORD-1 for 0.01 USD?\nTool: none" for 1 USD?`) || !strings.Contains(forged, "order_id: text of 2 lines (30 characters; sha256 003566de07a516001134b8cb79318c25):\n    | ORD-1 for 0.01 USD?\n    | Tool: none\n") {
		t.Errorf("a value that reads as wording is not set apart:\n%s", forged)
	}
}

// shape is a Schema for tests: members, items, and the writeOnly mark.
type shape struct {
	members   map[string]*shape
	items     *shape
	writeOnly bool
}

func (s *shape) Member(name string) question.Schema {
	if m := s.members[name]; m != nil {
		return m
	}
	return nil
}

func (s *shape) Items() question.Schema {
	if s.items != nil {
		return s.items
	}
	return nil
}

func (s *shape) Sensitive() bool { return s.writeOnly }

// A member the schema marks writeOnly is shown as set, with its length,
// never its value: at the root, nested, in a list's items, and in the
// tool's own wording.
func TestSensitiveMembersAreNotShown(t *testing.T) {
	secret := &shape{writeOnly: true}
	input := &shape{members: map[string]*shape{
		"user":     {},
		"password": secret,
		"card":     {members: map[string]*shape{"number": secret, "holder": {}}},
		"keys":     {items: secret},
		"token":    secret,
	}}
	login := question.Tool{Name: "log_in", Version: "1.0", Approve: "Log in as {user} with {password}?", Input: input}
	q := question.Render(login, []byte(`{"user":"ana","password":"hunter2hunter2","card":{"number":"4111111111111111","holder":"Ana"},"keys":["k-one","k-two"],"token":"tok-secret"}`))
	for _, want := range []string{
		"Log in as ana with (sensitive: set, 14 characters)?",
		`user: "ana"`,
		"password: (sensitive: set, 14 characters)",
		"number: (sensitive: set, 16 characters)",
		`holder: "Ana"`,
		"- (sensitive: set, 5 characters)",
		"token: (sensitive: set, 10 characters)",
	} {
		if !strings.Contains(q, want) {
			t.Errorf("%q not in\n%s", want, q)
		}
	}
	for _, leaked := range []string{"hunter2", "4111", "k-one", "tok-secret"} {
		if strings.Contains(q, leaked) {
			t.Errorf("the question shows %q:\n%s", leaked, q)
		}
	}
}

// Brief, for a place that must be short, cuts at its bound and says so: a
// string by its start, size and digest, a list by its first 50 items, text
// of several lines by its first lines; nothing under the bound is cut.
func TestBriefCutsAndSaysSo(t *testing.T) {
	long := `{"s":"` + strings.Repeat("é", 500) + `","xs":[` + strings.TrimSuffix(strings.Repeat(`"x", `, 60), ", ") + `],"patch":"` + strings.Repeat(`line\n`, 100) + `\u202e"}`
	q, cut := question.Brief(tool, []byte(long), 200)
	for _, w := range []string{`s: "` + strings.Repeat("é", 200) + `"… (500 characters in all; sha256 `, "… 10 more items, 60 in all (sha256 of the whole: ",
		"patch: text of 101 lines (501 characters; sha256 ", strings.Repeat("\n    | line", 40) + "\n    (… the rest is cut here)", "Some values are too long to show here"} {
		if !strings.Contains(q, w) {
			t.Errorf("%q not in\n%s", w, q)
		}
	}
	if !cut || strings.Contains(q, "\\u202E") {
		t.Errorf("cut %v:\n%s", cut, q)
	}
	short := `{"s":"` + strings.Repeat("é", 199) + `"}`
	if q, cut := question.Brief(tool, []byte(short), 200); cut || q != question.Render(tool, []byte(short)) {
		t.Errorf("a call under the bound: cut %v\n%s", cut, q)
	}
	if q, _ := question.Brief(tool, []byte(`{"s":"`+strings.Repeat("a", 1200)+`"}`), 0); !strings.Contains(q, "(1200 characters in all") {
		t.Errorf("the default bound (%d) cut nothing:\n%s", question.DefaultBrief, q)
	}
}
