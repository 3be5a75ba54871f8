package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/testing/testmod"
)

// Two handler packages with a package name in common, and two agents: the
// on-call agent's set has every tool, the reader's only the read tools.
var setsModule = map[string]string{
	"tools/weather/weather.go": `package weather

import "context"

// Args ask for a forecast.
type Args struct {
	// City is the city's name.
	City string ` + "`json:\"city\"`" + `
}

// Forecast is a forecast.
type Forecast struct {
	// Summary is the weather in a word.
	Summary string ` + "`json:\"summary\"`" + `
}

// GetForecast returns the forecast for a city.
//
//keel:tool name=get_forecast version=1.0 effect=read
func GetForecast(ctx context.Context, args Args) (Forecast, error) { return Forecast{Summary: "sunny"}, nil }
`,
	"tools/notes/store/notes.go": `package store

import "context"

// Note is a note.
type Note struct {
	// Text is the note.
	Text string ` + "`json:\"text\"`" + `
}

// AddNote saves a note.
//
//keel:tool name=add_note version=1.0 effect=write
//keel:param text what to write down
func AddNote(ctx context.Context, text string) (Note, error) { return Note{Text: text}, nil }

// NoArgs is an empty argument object.
type NoArgs struct{}

// ListNotes returns the last note.
//
//keel:tool name=list_notes version=1.0 effect=read
func ListNotes(ctx context.Context, args NoArgs) (Note, error) { return Note{Text: "milk"}, nil }
`,
	"tools/weather/store/cache.go": `package store

import "context"

// Stats is a second package named store: the generated code tells the two
// apart by their parent directories.
type Stats struct {
	// Hits counts cache hits.
	Hits int ` + "`json:\"hits\"`" + `
}

// NoArgs is an empty argument object.
type NoArgs struct{}

// CacheStats reports the forecast cache.
//
//keel:tool name=cache_stats version=1.0 effect=read
func CacheStats(ctx context.Context, args NoArgs) (Stats, error) { return Stats{}, nil }
`,
	"agents/oncall/generate.go": "package oncall\n\n//go:" + "generate go tool keelgen -out . ../../tools/...\n",
	"agents/reader/generate.go": "package reader\n\n//go:" + "generate go tool keelgen -out . -tools get_forecast,list_notes ../../tools/...\n",
	"cmd/harness/main.go": `package main

import (
	"context"
	"encoding/json"
	"fmt"

	"example.com/user/agents/oncall"
	"example.com/user/agents/reader"
	"github.com/keelgen/keel/runtime"
)

func main() {
	on, err := oncall.NewExecutor()
	if err != nil {
		panic(err)
	}
	rd, err := reader.NewExecutor()
	if err != nil {
		panic(err)
	}
	ec := runtime.ExecutionContext{AllowSideEffects: true}
	add := runtime.ToolCall{ID: "1", Name: oncall.ToolAddNote, Arguments: json.RawMessage(` + "`" + `{"text":"milk"}` + "`" + `)}
	for _, r := range []runtime.ToolResult{
		on.Execute(context.Background(), ec, add),
		rd.Execute(context.Background(), ec, add),
		rd.Execute(context.Background(), ec, runtime.ToolCall{ID: "2", Name: reader.ToolListNotes, Arguments: json.RawMessage(` + "`{}`" + `)}),
	} {
		fmt.Println(r.ToolName, r.Code())
	}
	fmt.Println(len(oncall.ModelTools()), len(reader.ModelTools()))
}
`,
}

// One repository, two handler packages, two agents: each set is its own
// compiled whitelist. The reader's executor refuses the on-call agent's
// write tool as unknown_tool, and harness code that names it from the
// reader's package does not compile. A tool added to a handler package
// joins only the set that does not select by name; -check names the stale
// files of that set only.
func TestTwoPackagesTwoSets(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	dir := testmod.New(t, setsModule)
	testmod.MustGo(t, dir, "generate", "./...")
	for _, f := range []string{"agents/oncall/keel_tools.go", "agents/reader/keel_tools.go", "agents/oncall/schemas/add_note.input.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "agents/reader/schemas/add_note.input.json")); !os.IsNotExist(err) {
		t.Fatal("the reader's set has add_note")
	}
	src, err := os.ReadFile(filepath.Join(dir, "agents/oncall/keel_tools.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`notesstore "example.com/user/tools/notes/store"`, `weatherstore "example.com/user/tools/weather/store"`,
		`"example.com/user/tools/weather"`, "notesstore.AddNote", "weatherstore.CacheStats", "weather.GetForecast"} {
		if !strings.Contains(string(src), want) {
			t.Fatalf("the on-call set lacks %s:\n%s", want, src)
		}
	}

	out := testmod.MustGo(t, dir, "run", "./cmd/harness")
	want := "add_note \nadd_note unknown_tool\nlist_notes \n4 2"
	if out != want {
		t.Fatalf("harness:\n%s\nwant:\n%s", out, want)
	}

	// Naming the write tool through the reader's package does not compile.
	testmod.Write(t, dir, map[string]string{"cmd/wrong/main.go": "package main\n\nimport \"example.com/user/agents/reader\"\n\nfunc main() { _ = reader.ToolAddNote }\n"})
	if out, err := testmod.Go(dir, "build", "./cmd/wrong"); err == nil || !strings.Contains(out, "undefined: reader.ToolAddNote") {
		t.Fatalf("the reader's set names add_note (err %v):\n%s", err, out)
	}

	// A new read tool joins the set that takes every tool, not the reader's.
	testmod.Write(t, dir, map[string]string{"tools/weather/alerts.go": `package weather

import "context"

// Alerts lists weather alerts for a city.
//
//keel:tool name=get_alerts version=1.0 effect=read
func GetAlerts(ctx context.Context, args Args) (Forecast, error) { return Forecast{}, nil }
`})
	check := func(set string, args ...string) (string, error) {
		return keelgenIn(filepath.Join(dir, "agents", set), append([]string{"-check", "-out", "."}, args...)...)
	}
	if out, err := check("reader", "-tools", "get_forecast,list_notes", "../../tools/..."); err != nil {
		t.Fatalf("-check of the reader's set after adding a tool elsewhere: %v\n%s", err, out)
	}
	out, err = check("oncall", "../../tools/...")
	if err == nil || !strings.Contains(out, "stale: keel_tools.go") || !strings.Contains(out, "missing: schemas/get_alerts.input.json") {
		t.Fatalf("-check of the on-call set: err %v\n%s", err, out)
	}

	// A tool that moves into the reader's set, and one that leaves it, show
	// in that set's diff; the set's selection is the whole story.
	moved, err := keelgenIn(filepath.Join(dir, "agents", "reader"), "-diff", "-out", ".", "-tools", "get_forecast,cache_stats", "../../tools/...")
	if err == nil || !strings.Contains(moved, "+ cache_stats 1.0 (read): added") || !strings.Contains(moved, "- list_notes 1.0 (read): removed") {
		t.Fatalf("-diff of a changed selection: err %v\n%s", err, moved)
	}

	// The same set from the patterns in another order: the same bytes.
	a, err := keelgenIn(filepath.Join(dir, "agents", "oncall"), "-diff", "-out", ".", "../../tools/weather", "../../tools/notes/store")
	b, err2 := keelgenIn(filepath.Join(dir, "agents", "oncall"), "-diff", "-out", ".", "../../tools/notes/store", "../../tools/weather")
	if withoutProgress(a) != withoutProgress(b) || err == nil || err2 == nil || !strings.Contains(a, "+ get_alerts 1.0 (read): added") {
		t.Fatalf("-diff by pattern order:\n%s\n---\n%s", a, b)
	}

	// A tool name declared in two packages is reported at both places.
	testmod.Write(t, dir, map[string]string{"tools/notes/store/dup.go": `package store

import "context"

// Dup is a second get_forecast.
//
//keel:tool name=get_forecast version=1.0 effect=read
func Dup(ctx context.Context, args NoArgs) (Note, error) { return Note{}, nil }
`})
	out, err = check("oncall", "../../tools/...")
	if err == nil || !strings.Contains(out, `tools/notes/store/dup.go:7:1: duplicate tool name "get_forecast" (also declared at weather.go:19 in example.com/user/tools/weather)`) ||
		!strings.Contains(out, `tools/weather/weather.go:19:1: duplicate tool name "get_forecast" (first declared at dup.go:7 in example.com/user/tools/notes/store)`) {
		t.Fatalf("duplicate across packages: err %v\n%s", err, out)
	}
}

// Run by hand in a set's folder, keelgen refuses flags that would change
// the set its go:generate line writes (the issue's -defer left out), and
// names the line; the same flags pass; -lint writes nothing at all.
func TestHandRunKeepsTheSetsFlags(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	dir := testmod.New(t, map[string]string{
		"notes/notes.go":  strings.Replace(userHandlers, "GENERATE\n", "", 1),
		"catalog/gen.go":  "package catalog\n\n//go:generate go tool keelgen -defer * -out . ../notes\n",
		"catalog/keep.go": "package catalog\n",
	})
	setDir := filepath.Join(dir, "catalog")
	mustKeelgenIn(t, setDir, "-defer", "*", "-out", ".", "../notes")
	lock, err := os.ReadFile(filepath.Join(setDir, "keel.lock.json"))
	if err != nil || strings.Count(string(lock), `"deferred": true`) != 2 {
		t.Fatalf("the set's lock: %v\n%s", err, lock)
	}
	out, err := keelgenIn(setDir, "-out", ".", "../notes")
	if err == nil || !strings.Contains(out, "gen.go:3 writes this set with: keelgen -defer * -out . ../notes") || !strings.Contains(out, `-defer "", not "*"`) {
		t.Fatalf("a run without the set's -defer: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(filepath.Join(setDir, "keel.lock.json")); string(after) != string(lock) {
		t.Fatal("the refused run changed the lock")
	}
	before := snapshot(t, setDir)
	if out, err := keelgenIn(setDir, "-lint", "-out", ".", "../notes"); err != nil {
		t.Fatalf("-lint: %v\n%s", err, out)
	}
	if snapshot(t, setDir) != before {
		t.Fatal("-lint wrote")
	}
}

// withoutProgress drops the lines keelgen prints when a stage is slow: a
// loaded machine prints them for one run and not the next.
func withoutProgress(out string) string {
	var kept []string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "keelgen: ") || !strings.HasSuffix(line, "...") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}
