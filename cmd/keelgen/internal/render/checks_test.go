package render

import (
	"fmt"
	"go/types"
	"strings"
	"testing"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

func planner() *codecs {
	return &codecs{codecState: &codecState{pkg: &model.Package{}, funcs: map[string]string{}, taken: map[string]bool{}, patVars: map[string]string{}},
		tool: &model.Tool{Name: "t"}, side: "input"}
}

func mustNode(t *testing.T, doc string) node {
	t.Helper()
	n, err := parseNode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// show prints a plan compactly: keyword, then what it compares with.
func show(cs []check) string {
	var parts []string
	for _, c := range cs {
		s := c.keyword
		switch {
		case c.always:
			s += " always"
		case c.nonZero:
			s += " !=0"
		case c.int != nil:
			s += " " + c.op + c.int.String()
		case c.op != "":
			s += fmt.Sprintf(" %s%d", c.op, c.n)
		case c.text != "":
			s += fmt.Sprintf(" %v(%s)", c.float, c.text)
		case c.pattern != "":
			s += " " + c.pattern
		}
		if c.values != nil {
			s += fmt.Sprint(" ", c.values)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// Integer bounds are decided against the Go type's range at generate time:
// one every value meets is no check, one none meets fails at once, a whole
// bound is kept as written and a fractional one rounded onto the integers.
func TestIntChecksPlan(t *testing.T) {
	int8T, uint8T := types.Typ[types.Int8], types.Typ[types.Uint8]
	for _, c := range []struct {
		schema string
		typ    types.Type
		k      kind
		want   string
	}{
		{`{"minimum":-200}`, int8T, kInt, ""},
		{`{"minimum":200}`, int8T, kInt, "minimum always"},
		{`{"minimum":-1}`, uint8T, kUint, ""},
		{`{"minimum":0}`, int8T, kInt, "minimum <0"},
		{`{"maximum":2.5}`, int8T, kInt, "maximum >2"},
		{`{"exclusiveMinimum":2.5}`, int8T, kInt, "exclusiveMinimum <3"},
		{`{"exclusiveMaximum":100}`, int8T, kInt, "exclusiveMaximum >=100"},
		{`{"exclusiveMaximum":1000}`, int8T, kInt, ""},
		{`{"exclusiveMaximum":-128}`, int8T, kInt, "exclusiveMaximum always"},
		{`{"multipleOf":1}`, int8T, kInt, ""},
		{`{"multipleOf":0.5}`, int8T, kInt, ""}, // 1/2: every integer is a multiple
		{`{"multipleOf":300}`, int8T, kInt, "multipleOf !=0"},
		{`{"multipleOf":4}`, int8T, kInt, "multipleOf 4"},
		{`{"enum":[1,2.5,300,"x"]}`, int8T, kInt, "enum [1]"},
		{`{"const":"x"}`, int8T, kInt, "const always"},
	} {
		if got := show(intChecks(mustNode(t, c.schema), c.typ, c.k)); got != c.want {
			t.Errorf("%s on %s: %q, want %q", c.schema, c.typ, got, c.want)
		}
	}
}

// A float bound is held as the value's Go type holds it, beside its text;
// one beyond the type's range is a diagnostic.
func TestFloatChecksPlan(t *testing.T) {
	g := planner()
	cs := g.floatChecks(mustNode(t, `{"minimum":0.1,"exclusiveMaximum":1,"multipleOf":0.25,"enum":[0.5,"x"]}`), 32, "/ratio")
	if got, want := show(cs), "minimum 0.10000000149011612(0.1); exclusiveMaximum 1(1); multipleOf 0(0.25); enum [0.5]"; got != want {
		t.Errorf("float32 plan %q, want %q", got, want)
	}
	if !needsLiteral(cs) || needsLiteral(cs[1:2]) {
		t.Error("the exact checks need the literal, an exclusive bound does not")
	}
	if len(g.diags) != 0 {
		t.Errorf("diagnostics %v", g.diags)
	}
	g.floatChecks(mustNode(t, `{"maximum":1e39}`), 32, "/big")
	if len(g.diags) != 1 || !strings.Contains(g.diags[0].Message, "bound 1e39 is beyond the range of a float32") {
		t.Errorf("diagnostics %v", g.diags)
	}
}

// The string plan runs enum, lengths, pattern and format in that order; a
// pattern that does not compile and a format keel cannot check are
// diagnostics, raised while planning.
func TestStringChecksPlan(t *testing.T) {
	g := planner()
	cs := g.stringChecks(mustNode(t, `{"format":"uuid","pattern":"^a","maxLength":9,"minLength":1,"enum":["a",1]}`), "/id", "id")
	if got, want := show(cs), "enum [a]; minLength <1; maxLength >9; pattern patternId; format 0(uuid)"; got != want {
		t.Errorf("plan %q, want %q", got, want)
	}
	if g.pattern("^a", "other") != "patternId" {
		t.Error("a pattern planned twice gets a second var")
	}
	g.stringChecks(mustNode(t, `{"pattern":"(","format":"color"}`), "/bad", "bad")
	if len(g.diags) != 2 || !strings.Contains(g.diags[0].Message, "pattern does not compile") || !strings.Contains(g.diags[1].Message, `format "color" cannot be checked`) {
		t.Errorf("diagnostics %v", g.diags)
	}
}

func TestContainerChecksPlan(t *testing.T) {
	g := planner()
	n := mustNode(t, `{"minItems":1,"maxItems":3,"uniqueItems":true}`)
	if got := show(countChecks(n, "minItems", "maxItems")); got != "minItems <1; maxItems >3" {
		t.Errorf("counts %q", got)
	}
	if cs := g.uniqueCheck(n, types.Typ[types.String], "/tags"); len(cs) != 1 || len(g.diags) != 0 {
		t.Errorf("unique strings: %v %v", cs, g.diags)
	}
	if cs := g.uniqueCheck(n, types.Typ[types.Float64], "/scores"); cs != nil || len(g.diags) != 1 {
		t.Errorf("unique floats: %v %v", cs, g.diags)
	}
	if cs := boolChecks(mustNode(t, `{"const":true}`)); show(cs) != "const [true]" {
		t.Errorf("bool %q", show(cs))
	}
}
