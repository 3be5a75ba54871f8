package migrate_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/keelgen/keel/example/migrate/branches"
	branchesgen "github.com/keelgen/keel/example/migrate/branches/generated"
	"github.com/keelgen/keel/runtime"
)

// A library's type as the result, as github-mcp-server passes go-github's
// objects through: keel writes *github.Branch as go-github itself does
// (encoding/json of the same value, compared as data), with its nil
// pointers as null, its Timestamp as RFC 3339 text, and the TreeEntry that
// go-github writes by its own MarshalJSON as that method wrote it; and the
// result passes the generated output checks.
func TestALibrarysTypeIsAResult(t *testing.T) {
	exec, err := branchesgen.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "b", Name: branchesgen.ToolGetBranch,
		Arguments: json.RawMessage(`{"repo":"octo/hello","branch":"main"}`)})
	if !r.OK {
		t.Fatalf("%+v", r.Error)
	}
	want, err := json.Marshal(branches.Branch("octo/hello", "main"))
	if err != nil {
		t.Fatal(err)
	}
	var got, expected any
	if json.Unmarshal(r.Data, &got) != nil || json.Unmarshal(want, &expected) != nil || !reflect.DeepEqual(got, expected) {
		t.Errorf("keel wrote\n%s\ngo-github writes\n%s", r.Data, want)
	}
	for _, part := range []string{`"required_status_checks":null`, `"date":"2026-12-01T09:30:00Z"`, `"sha":null,"path":"README.md"`, `<for real> & more`} {
		if !strings.Contains(string(r.Data), part) {
			t.Errorf("keel's result lacks %s:\n%s", part, r.Data)
		}
	}
}
