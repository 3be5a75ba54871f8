package model_test

import (
	"go/token"
	"testing"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
)

func TestIdent(t *testing.T) {
	for name, want := range map[string]string{
		"lookup_incident": "LookupIncident",
		"tag-item":        "TagItem",
		"2fa_reset":       "T2faReset",
		"x":               "X",
		"a__b":            "AB",
	} {
		if got := model.Ident(name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// Diagnostics read file:line:col relative to the module, and sort by place
// then message.
func TestDiagnostics(t *testing.T) {
	at := func(file string, line int, msg string) model.Diagnostic {
		return model.Diagnostic{Pos: token.Position{Filename: file, Line: line, Column: 1}, Message: msg}
	}
	if got := at("/m/tools/a.go", 3, "bad").Format("/m"); got != "tools/a.go:3:1: bad" {
		t.Errorf("below dir: %s", got)
	}
	if got := at("/elsewhere/a.go", 3, "bad").Format("/m"); got != "/elsewhere/a.go:3:1: bad" {
		t.Errorf("outside dir: %s", got)
	}
	if got := (model.Diagnostic{Message: "no position"}).String(); got != "no position" {
		t.Errorf("no file: %s", got)
	}
	ds := []model.Diagnostic{at("b.go", 1, "x"), at("a.go", 9, "y"), at("a.go", 2, "z"), at("a.go", 2, "a")}
	model.SortDiagnostics(ds)
	var got []string
	for _, d := range ds {
		got = append(got, d.String())
	}
	want := []string{"a.go:2:1: a", "a.go:2:1: z", "a.go:9:1: y", "b.go:1:1: x"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sorted %q, want %q", got, want)
		}
	}
}
