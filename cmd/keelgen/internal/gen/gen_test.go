package gen_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/keelgen/keel/cmd/keelgen/internal/contract"
	"github.com/keelgen/keel/cmd/keelgen/internal/files"
	"github.com/keelgen/keel/cmd/keelgen/internal/gen"
	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/cmd/keelgen/internal/output"
	"github.com/keelgen/keel/cmd/keelgen/internal/render"
	"github.com/keelgen/keel/internal/testing/testmod"
	"github.com/keelgen/keel/internal/testing/txtartest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata (output and diagnostics)")

func TestMain(m *testing.M) {
	testmod.Setup()
	code := m.Run()
	if testModuleDir != "" {
		os.RemoveAll(testModuleDir)
	}
	os.Exit(code)
}

func generate(t *testing.T, cfg gen.Config) *gen.Result {
	t.Helper()
	res, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		t.Error(d.Format(cfg.Dir))
	}
	if !res.Writable() {
		t.FailNow()
	}
	return res
}

// Each testdata/golden/NAME/in holds handler packages; NAME/out holds what
// keelgen must write for it. go test ./cmd/keelgen/internal/gen -update rewrites out.
func TestGolden(t *testing.T) {
	t.Parallel()
	cases, err := filepath.Glob("testdata/golden/*")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			// Warnings for every target, golden in targets.txt: what each
			// provider's form cannot take of each tool, at its directive.
			var every []string
			for _, target := range gen.Targets {
				every = append(every, target.Name)
			}
			res := generate(t, gen.Config{Dir: dir, Patterns: []string{"./in/..."}, OutDir: "out", Targets: every, Shared: golden(t)})
			targetWarnings(t, dir, res)
			if *update {
				changes, err := output.Compare(res.OutDir, res.Files)
				if err == nil {
					err = output.Write(res.OutDir, res.Files, changes)
				}
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			changes, err := output.Compare(res.OutDir, res.Files)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range changes.Lines("out") {
				t.Errorf("%s (run go test ./cmd/keelgen/internal/gen -update and review the diff)", l)
			}
			for _, f := range res.Files {
				if strings.HasSuffix(f.Path, ".go") && !bytes.HasPrefix(f.Content, []byte("// "+files.Header+"\n")) {
					t.Errorf("%s lacks the header", f.Path)
				}
			}
		})
	}
}

// The golden output compiles and passes vet: one go vet for every case.
func TestGoldenOutputPassesVet(t *testing.T) {
	testmod.EndToEnd(t) // go vet compiles the output and its dependencies
	t.Parallel()
	outs, err := filepath.Glob("testdata/golden/*/out")
	if err != nil || len(outs) == 0 {
		t.Fatalf("no golden output: %v", err)
	}
	args := []string{"vet"}
	for _, dir := range outs {
		args = append(args, "./"+filepath.ToSlash(dir))
	}
	if out, err := testmod.Go(".", args...); err != nil {
		t.Errorf("go vet of the golden output: %v\n%s", err, out)
	}
}

// Two runs give the same bytes, and so does the same package with its files
// in the other order.
func TestDeterministic(t *testing.T) {
	testmod.EndToEnd(t) // two modules, a run in each
	t.Parallel()
	// Two runs on one package give the same bytes: TestGolden compares
	// every run with the committed output. Here, the order of the files.
	search, err := os.ReadFile("testdata/golden/mixed/in/search.go")
	if err != nil {
		t.Fatal(err)
	}
	tag, err := os.ReadFile("testdata/golden/mixed/in/tag.go")
	if err != nil {
		t.Fatal(err)
	}
	// Same declarations, file names swapped: go list order is reversed.
	fwd := testmod.New(t, map[string]string{"in/a.go": string(search), "in/b.go": string(tag)})
	rev := testmod.New(t, map[string]string{"in/b.go": string(search), "in/a.go": string(tag)})
	x := generate(t, gen.Config{Dir: fwd, Patterns: []string{"./in"}, OutDir: "out"})
	y := generate(t, gen.Config{Dir: rev, Patterns: []string{"./in"}, OutDir: "out"})
	sameFiles(t, x.Files, y.Files)
}

// A run goes ahead on the committed schema files while the schema program
// runs, and keeps that work only when the program gives the same bytes: a
// schema file edited by hand is replaced by the program's, and nothing
// derived from the edit survives.
func TestCommittedSchemasAreOnlyAGuess(t *testing.T) {
	testmod.EndToEnd(t) // three runs on one module
	t.Parallel()
	search, err := os.ReadFile("testdata/golden/mixed/in/search.go")
	if err != nil {
		t.Fatal(err)
	}
	dir := testmod.New(t, map[string]string{"in/search.go": string(search)})
	cfg := gen.Config{Dir: dir, Patterns: []string{"./in"}, OutDir: "out"}
	first := generate(t, cfg)
	writeResult(t, first)
	i := slices.IndexFunc(first.Files, func(f render.File) bool { return strings.HasSuffix(f.Path, ".input.json") })
	if i < 0 {
		t.Fatal("the set has no input schema")
	}
	schema := first.Files[i]
	edited := bytes.Replace(schema.Content, []byte(`"type": "object"`), []byte(`"type": "object", "minProperties": 0`), 1)
	if bytes.Equal(edited, schema.Content) {
		t.Fatalf("%s has no root type to edit:\n%s", schema.Path, schema.Content)
	}
	path := filepath.Join(first.OutDir, filepath.FromSlash(schema.Path))
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	// The edited file is what the guess reads; the program's bytes win.
	sameFiles(t, first.Files, generate(t, cfg).Files)
	if err := os.WriteFile(path, schema.Content, 0o644); err != nil {
		t.Fatal(err)
	}
	// Every committed file as the program makes it: the guess is the run.
	sameFiles(t, first.Files, generate(t, cfg).Files)
}

// writeResult writes a run's files as the command does.
func writeResult(t *testing.T, res *gen.Result) {
	t.Helper()
	changes, err := output.Compare(res.OutDir, res.Files)
	if err == nil {
		err = output.Write(res.OutDir, res.Files, changes)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func sameFiles(t *testing.T, a, b []render.File) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d files vs %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Content, b[i].Content) {
			t.Errorf("file %d differs: %s vs %s", i, a[i].Path, b[i].Path)
		}
	}
}

// Each testdata/diag/*.txtar holds a handler package and, in its "want"
// section, every diagnostic keelgen must report for it, in order.
func TestDiagnostics(t *testing.T) {
	t.Parallel()
	txtartest.Run(t, "testdata/diag/*.txtar", *update, func(t *testing.T, sections map[string]string) string {
		dir, shared := caseDir(t, "diag", path.Base(t.Name())) // the archive's files, in a module that requires what keel does
		res, err := gen.Generate(gen.Config{Dir: dir, OutDir: "out", Shared: shared})
		if err != nil {
			t.Fatal(err)
		}
		if res.Writable() || res.Files != nil {
			t.Fatal("Generate returned files for a package with problems")
		}
		var got strings.Builder
		for _, d := range res.Diagnostics {
			got.WriteString(d.Format(dir) + "\n")
		}
		return got.String()
	})
}

// Each testdata/contract/*.txtar holds a handler package before (old.go)
// and after (new.go) a change. The test generates and writes the old
// package, then generates the new one against the written lock, and
// compares the warnings, the version gate's refusals and the review diff
// with the "want" section: the whole path from Go types to the gate, on a
// few cases. cmd/keelgen/internal/contract's cases cover the gate on schema pairs.
func TestContractChanges(t *testing.T) {
	t.Parallel()
	txtartest.Run(t, "testdata/contract/*.txtar", *update, func(t *testing.T, sections map[string]string) string {
		old, shared := caseDir(t, "contract", path.Join(path.Base(t.Name()), "old")) // sections["old.go"] as h/h.go
		out := filepath.Join(t.TempDir(), "out")
		writeResult(t, generate(t, gen.Config{Dir: old, Patterns: []string{"./h"}, OutDir: out, Shared: shared}))
		dir, _ := caseDir(t, "contract", path.Join(path.Base(t.Name()), "new"))
		res, err := gen.Generate(gen.Config{Dir: dir, Patterns: []string{"./h"}, OutDir: out, Shared: shared})
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		for _, list := range [][]model.Diagnostic{res.Warnings, res.Diagnostics} {
			for _, d := range list {
				got.WriteString(d.Format(dir) + "\n")
			}
		}
		got.WriteString(contract.Diff(res.Previous, res.Lock, res.Changes))
		return got.String()
	})
}

func targetWarnings(t *testing.T, dir string, res *gen.Result) {
	t.Helper()
	var got strings.Builder
	for _, w := range res.Warnings {
		abs, _ := filepath.Abs(dir)
		got.WriteString(w.Format(abs) + "\n")
	}
	file := filepath.Join(dir, "targets.txt")
	if *update {
		if err := os.WriteFile(file, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", got.String(), want)
	}
}

func TestUnknownTarget(t *testing.T) {
	t.Parallel()
	if _, err := gen.Generate(gen.Config{Dir: "testdata/golden/mixed", Patterns: []string{"./in"}, OutDir: "out", Targets: []string{"palm"}, Shared: golden(t)}); err == nil {
		t.Fatal("an unknown target was accepted")
	}
}

// A schema the executor could not compile is a diagnostic at generate time:
// an executor of a locked set trusts keelgen to have compiled it.
func TestSchemaThatDoesNotCompile(t *testing.T) {
	t.Parallel()
	dir, shared := inline(t)
	res, err := gen.Generate(gen.Config{Dir: dir, Patterns: []string{"./h"}, OutDir: "out", Shared: shared})
	if err != nil {
		t.Fatal(err)
	}
	if res.Writable() || len(res.Diagnostics) != 1 || !strings.Contains(res.Diagnostics[0].Format(dir), "h/h.go:16:1: find: input schema does not compile:") {
		t.Fatalf("diagnostics %v", res.Diagnostics)
	}
}

// brokenPattern is TestSchemaThatDoesNotCompile's handler package.
const brokenPattern = `package h

import (
	"context"

	"github.com/invopop/jsonschema"
)

// Code is a code with a broken pattern.
type Code string

func (Code) JSONSchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Pattern: "(unclosed"} }

// Find finds by code.
//
//keel:tool name=find version=1.0 effect=read
func Find(ctx context.Context, code Code) (struct{}, error) { return struct{}{}, nil }
`

// What the model reads of plain-parameter tools: //keel:param
// descriptions, a type's own JSONSchema description where no //keel:param
// gives one, the doc comments as written, no root description restating
// the arguments; -lint names what is still undescribed, and a comment that
// starts with its Go name, at the comment.
func TestModelFacingText(t *testing.T) {
	t.Parallel()
	dir, shared := inline(t)
	res, err := gen.Generate(gen.Config{Dir: dir, Patterns: []string{"./h"}, OutDir: "out", Shared: shared, Lint: true})
	if err != nil || !res.Writable() {
		t.Fatal(err, res.Diagnostics)
	}
	files := map[string]string{}
	for _, f := range res.Files {
		files[f.Path] = string(f.Content)
	}
	for file, wants := range map[string][]string{
		"schemas/book_room.input.json":  {`"description": "how long the booking lasts, in minutes"`, `"description": "A room, such as R12."`},
		"schemas/book_room.output.json": {`"description": "ID is the booking's id."`, `"description": "Booking is a confirmed booking."`},
		"schemas/weekday.input.json":    {"\"at\": {\n      \"type\": \"string\",\n      \"format\": \"date-time\",\n      \"description\": \"the moment\"", "\"required\": [\n    \"at\"\n  ]"},
		"keel_tools.go":                 {`"BookRoom books a room for waitMs milliseconds at most and returns a Booking."`, "jsonschema_description:\"how long the booking lasts, in minutes\""},
	} {
		for _, want := range wants {
			if !strings.Contains(files[file], want) {
				t.Errorf("%s lacks %s:\n%s", file, want, files[file])
			}
		}
	}
	if strings.Contains(files["schemas/book_room.input.json"], "BookRoomArgs") || strings.Count(files["schemas/book_room.input.json"], `"description"`) != 2 {
		t.Errorf("input schema has a root description or a Go name:\n%s", files["schemas/book_room.input.json"])
	}
	var warnings []string
	for _, w := range res.Warnings {
		warnings = append(warnings, w.Message)
	}
	want := []string{
		"warning: book_room: parameter room_id has no description for the model; add //keel:param roomID <what it is>",
		"warning: book_room: the description names parameter waitMs, which the model knows as wait_ms",
		"warning: book_room: parameter wait_ms has no description for the model; add //keel:param waitMs <what it is>",
		"warning: book_room: output member /room has no description for the model; give its field a doc comment",
		"warning: book_room: the description names the Go identifier Booking, which the model does not know",
		"warning: weekday: output member /room has no description for the model; give its field a doc comment",
		`warning: book_room: its description starts with the handler's Go name BookRoom, which the model does not know and reads as written; if BookRoom is its Go name, not a word of the sentence, edit the comment: "BookRoom books a room" → "Books a room for"`,
		`warning: book_room: output member /: its description starts with the Go name Booking, which the model reads as written; if Booking is its Go name, not a word of the sentence, edit the comment: "Booking is a confirmed" → "A confirmed booking."`,
		`warning: book_room: output member /id: its description starts with the Go name ID, which the model reads as written; if ID is its Go name, not a word of the sentence, edit the comment: "ID is the booking's" → "The booking's id."`,
		`warning: weekday: its description starts with the handler's Go name Weekday, which the model does not know and reads as written; if Weekday is its Go name, not a word of the sentence, edit the comment: "Weekday books the day" → "Books the day of"`,
	}
	slices.Sort(warnings)
	slices.Sort(want)
	if !slices.Equal(warnings, want) {
		t.Errorf("lint warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
}

// modelFacingText is TestModelFacingText's handler package.
const modelFacingText = `package h

import (
	"context"
	"time"

	"github.com/invopop/jsonschema"
)

// RoomID names a room.
type RoomID string

func (RoomID) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: "^R[0-9]+$", Description: "A room, such as R12."}
}

// Booking is a confirmed booking.
type Booking struct {
	// ID is the booking's id.
	ID   string ` + "`json:\"id\"`" + `
	Room string ` + "`json:\"room\"`" + `
}

// BookRoom books a room for waitMs milliseconds at most and returns a Booking.
//
//keel:tool name=book_room version=1.0 effect=write
//keel:param minutes how long the booking lasts, in minutes
func BookRoom(ctx context.Context, roomID RoomID, minutes int, waitMs int) (Booking, error) {
	return Booking{}, nil
}

// Weekday books the day of a moment. A struct with a JSON form of its own
// (time.Time) as the only parameter is a plain parameter.
//
//keel:tool name=weekday version=1.0 effect=read
//keel:param at the moment
func Weekday(ctx context.Context, at time.Time) (Booking, error) { return Booking{}, nil }
`

// A module that builds a reflector older than v0.14 (a replace, as a
// Genkit module needs) is refused, with why and what to do: v0.13 would
// make omitzero fields required, schemas unlike the reviewed ones.
func TestOldReflectorRefused(t *testing.T) {
	testmod.EndToEnd(t) // go mod edit and go mod tidy, then a run
	t.Parallel()
	dir := testmod.New(t, map[string]string{"h/h.go": `package h

import "context"

// Args are optional.
type Args struct {
	Limit int ` + "`json:\"limit,omitzero\"`" + `
}

// List lists.
//
//keel:tool name=list version=1.0 effect=read
func List(ctx context.Context, args Args) (struct{}, error) { return struct{}{}, nil }
`})
	testmod.MustGo(t, dir, "mod", "edit", "-replace=github.com/invopop/jsonschema=github.com/invopop/jsonschema@v0.13.0")
	testmod.MustGo(t, dir, "mod", "tidy")
	_, err := gen.Generate(gen.Config{Dir: dir, Patterns: []string{"./h"}, OutDir: "out"})
	if err == nil || !strings.Contains(err.Error(), "keelgen needs github.com/invopop/jsonschema v0.14.0 or later") ||
		strings.Contains(err.Error(), "go get") {
		t.Fatalf("Generate under a v0.13 replace: %v", err)
	}
}

// keel never changes an author's words: every comment is the model's text
// as written, Go's doc convention ("Limit caps") and ordinary English that
// happens to start with the name ("Overwrite the dashboard") alike; -lint
// names each comment that starts with its Go name, at the comment, with the
// edit that leaves the name out, for the author to take or not.
func TestAuthorsWordsKept(t *testing.T) {
	t.Parallel()
	dir, shared := inline(t)
	res, err := gen.Generate(gen.Config{Dir: dir, Patterns: []string{"./h"}, OutDir: "out", Shared: shared, Lint: true})
	if err != nil || !res.Writable() {
		t.Fatal(err, res.Diagnostics)
	}
	files := map[string]string{}
	for _, f := range res.Files {
		files[f.Path] = string(f.Content)
	}
	for file, wants := range map[string][]string{
		"schemas/update_dashboard.input.json": {
			`"Overwrite the dashboard if it exists."`, `"Page number for pagination (1-indexed)."`, `"UID of existing dashboard to update."`,
			`"Limit caps the results."`, `"Folder is where the dashboard goes."`, `"Labels map names to values."`, `"Title must not be empty."`,
		},
		"schemas/update_dashboard.output.json": {`"Status of the update."`},
		"keel_tools.go":                        {`"Update updates a dashboard."`},
	} {
		for _, want := range wants {
			if !strings.Contains(files[file], want) {
				t.Errorf("%s lacks %s:\n%s", file, want, files[file])
			}
		}
	}
	var named []string
	for _, w := range res.Warnings {
		if strings.Contains(w.Message, "starts with") {
			named = append(named, w.Format(dir))
		}
	}
	slices.Sort(named)
	want := []string{ // every comment that starts with its name, at its line
		`h/h.go:13:2: warning: update_dashboard: input member /limit: its description starts with the Go name Limit, which the model reads as written; if Limit is its Go name, not a word of the sentence, edit the comment: "Limit caps the results." → "Caps the results."`,
		`h/h.go:15:2: warning: update_dashboard: input member /folder: its description starts with the Go name Folder, which the model reads as written; if Folder is its Go name, not a word of the sentence, edit the comment: "Folder is where the" → "Where the dashboard goes."`,
		`h/h.go:17:2: warning: update_dashboard: input member /labels: its description starts with the Go name Labels, which the model reads as written; if Labels is its Go name, not a word of the sentence, edit the comment: "Labels map names to" → "Map names to values."`,
		`h/h.go:19:2: warning: update_dashboard: input member /title: its description starts with the Go name Title, which the model reads as written; if Title is its Go name, not a word of the sentence, edit the comment: "Title must not be" → "Must not be empty."`,
		`h/h.go:25:2: warning: update_dashboard: output member /status: its description starts with the Go name Status, which the model reads as written; if Status is its Go name, not a word of the sentence, edit the comment: "Status of the update." → "Of the update."`,
		`h/h.go:29:1: warning: update_dashboard: its description starts with the handler's Go name Update, which the model does not know and reads as written; if Update is its Go name, not a word of the sentence, edit the comment: "Update updates a dashboard." → "Updates a dashboard."`,
		`h/h.go:7:2: warning: update_dashboard: input member /overwrite: its description starts with the Go name Overwrite, which the model reads as written; if Overwrite is its Go name, not a word of the sentence, edit the comment: "Overwrite the dashboard if" → "The dashboard if it"`,
		`h/h.go:9:2: warning: update_dashboard: input member /page: its description starts with the Go name Page, which the model reads as written; if Page is its Go name, not a word of the sentence, edit the comment: "Page number for pagination" → "Number for pagination (1-indexed)."`,
		`h/h.go:11:2: warning: update_dashboard: input member /uid: its description starts with the Go name UID, which the model reads as written; if UID is its Go name, not a word of the sentence, edit the comment: "UID of existing dashboard" → "Of existing dashboard to"`,
		`h/h.go:23:1: warning: update_dashboard: output member /: its description starts with the Go name Out, which the model reads as written; if Out is its Go name, not a word of the sentence, edit the comment: "Out is the update's" → "The update's outcome."`,
	}
	slices.Sort(want)
	if !slices.Equal(named, want) {
		t.Errorf("-lint on comments that start with their name:\n%s\nwant:\n%s", strings.Join(named, "\n"), strings.Join(want, "\n"))
	}
}

// authorsWords is TestAuthorsWordsKept's handler package.
const authorsWords = `package h

import "context"

// Args are a dashboard update.
type Args struct {
	// Overwrite the dashboard if it exists.
	Overwrite bool ` + "`json:\"overwrite,omitempty\"`" + `
	// Page number for pagination (1-indexed).
	Page int ` + "`json:\"page,omitempty\"`" + `
	// UID of existing dashboard to update.
	UID string ` + "`json:\"uid,omitempty\"`" + `
	// Limit caps the results.
	Limit int ` + "`json:\"limit,omitempty\"`" + `
	// Folder is where the dashboard goes.
	Folder string ` + "`json:\"folder,omitempty\"`" + `
	// Labels map names to values.
	Labels map[string]string ` + "`json:\"labels,omitempty\"`" + `
	// Title must not be empty.
	Title string ` + "`json:\"title,omitempty\"`" + `
}

// Out is the update's outcome.
type Out struct {
	// Status of the update.
	Status string ` + "`json:\"status\"`" + `
}

// Update updates a dashboard.
//
//keel:tool name=update_dashboard version=1.0 effect=write
func Update(ctx context.Context, a Args) (Out, error) { return Out{}, nil }
`

// A handler package named as the generated package (admin, generated into
// admin) is imported under a name of its own, never under the name of the
// file's own package.
func TestHandlerPackageNamedAsTheOutput(t *testing.T) {
	t.Parallel()
	dir, shared := inline(t)
	res, err := gen.Generate(gen.Config{Dir: dir, Patterns: []string{"./admin"}, OutDir: "gen/admin", Shared: shared})
	if err != nil || !res.Writable() {
		t.Fatal(err, res.Diagnostics)
	}
	for _, f := range res.Files {
		if f.Path != "keel_tools.go" {
			continue
		}
		src := string(f.Content)
		if !strings.HasPrefix(strings.SplitN(src, "\npackage ", 2)[1], "admin\n") {
			t.Fatalf("the generated package is not admin:\n%.400s", src)
		}
		for _, line := range strings.Split(src, "\n") {
			if !strings.HasSuffix(line, `/admin"`) {
				continue
			}
			if f := strings.Fields(line); len(f) != 2 || f[0] == "admin" {
				t.Fatalf("the handler package is imported under the generated package's name: %q", line)
			}
			return
		}
		t.Fatalf("no import of the handler package:\n%s", src)
	}
	t.Fatal("no keel_tools.go")
}

// namedAsTheOutput is TestHandlerPackageNamedAsTheOutput's handler package.
const namedAsTheOutput = `package admin

import "context"

// Out is what Ping says.
type Out struct {
	// Text is the answer.
	Text string ` + "`json:\"text\"`" + `
}

// Ping answers.
//
//keel:tool name=ping version=1.0 effect=read
func Ping(ctx context.Context) (Out, error) { return Out{Text: "pong"}, nil }
`

// keelgen -required lists each member of a tool's arguments as required or
// optional, and why: what a team porting structs from the go-sdk or mcp-go
// reads to see which members keel reads as required.
func TestRequiredReport(t *testing.T) {
	t.Parallel()
	dir, shared := inline(t)
	res, err := gen.Generate(gen.Config{Dir: dir, Patterns: []string{"./h"}, OutDir: "out", Shared: shared})
	if err != nil || !res.Writable() {
		t.Fatal(err, res.Diagnostics)
	}
	want := []string{
		"ping: required /host (a parameter of Ping)",
		"search: optional /filters (field Filters: omitempty in its json tag)",
		"search: optional /filters/0/since (field Since: omitzero in its json tag)",
		"search: optional /page (field Page: omitempty in its json tag)",
		"search: required /filters/0/team (field Team: its json tag has no omitempty or omitzero)",
		"search: required /query (field Query: its json tag has no omitempty or omitzero)",
	}
	got := slices.Clone(res.Required)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the report:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// requiredReport is TestRequiredReport's handler package.
const requiredReport = `package h

import "context"

// Filter narrows a search.
type Filter struct {
	// Team is whose.
	Team string ` + "`json:\"team\"`" + `
	// Since is how far back.
	Since string ` + "`json:\"since,omitzero\"`" + `
}

// Args are a search.
type Args struct {
	// Query is what to find.
	Query string ` + "`json:\"query\"`" + `
	// Page is which page.
	Page int ` + "`json:\"page,omitempty\"`" + `
	// Filters narrow it.
	Filters []Filter ` + "`json:\"filters,omitempty\"`" + `
}

// Out is nothing much.
type Out struct {
	// N counts.
	N int ` + "`json:\"n\"`" + `
}

// Search searches.
//
//keel:tool name=search version=1.0 effect=read
func Search(ctx context.Context, a Args) (Out, error) { return Out{}, nil }

// Ping pings.
//
//keel:tool name=ping version=1.0 effect=read
//keel:param host the host
func Ping(ctx context.Context, host string) (Out, error) { return Out{}, nil }
`

// A result member's omitempty that json v2 reads otherwise than json v1
// did gets a warning at the field with the omitzero edit: a zero number
// or false is written, an object that writes as {} is left out. A text,
// a list and a pointer, which both read alike, get none.
func TestOmitEmptyUnderJSONv2(t *testing.T) {
	t.Parallel()
	dir, shared := inline(t)
	res, err := gen.Generate(gen.Config{Dir: dir, Patterns: []string{"./h"}, OutDir: "out", Shared: shared})
	if err != nil || !res.Writable() {
		t.Fatal(err, res.Diagnostics)
	}
	var got []string
	for _, w := range res.Warnings {
		got = append(got, fmt.Sprintf("h/h.go:%d:%d: %s", w.Pos.Line, w.Pos.Column, w.Message))
	}
	want := []string{
		"h/h.go:14:2: warning: show: output schema at /deletions: omitempty does not omit a zero integer under json v2 (keel's writer follows it): 0 is written where json v1 left the member out; to leave it out, use omitzero (`json:\"deletions,omitzero\"`)",
		"h/h.go:16:2: warning: show: output schema at /merged: omitempty does not omit a zero boolean under json v2 (keel's writer follows it): false is written where json v1 left the member out; to leave it out, use omitzero (`json:\"merged,omitzero\"`)",
		"h/h.go:18:2: warning: show: output schema at /next: omitempty leaves an object out under json v2 (keel's writer follows it) when it writes as {}, where json v1 always wrote it; to leave out only its zero value, use omitzero (`json:\"next,omitzero\"`); to always write it, drop omitempty",
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// omitEmptyV2 is TestOmitEmptyUnderJSONv2's handler package.
const omitEmptyV2 = `package h

import "context"

// Page is a page.
type Page struct {
	// Its size.
	Size int ` + "`json:\"size\"`" + `
}

// Diff is a change.
type Diff struct {
	// Lines removed.
	Deletions int ` + "`json:\"deletions,omitempty\"`" + `
	// Whether it merged.
	Merged bool ` + "`json:\"merged,omitempty\"`" + `
	// Where it continues.
	Next Page ` + "`json:\"next,omitempty\"`" + `
	// Its title.
	Title string ` + "`json:\"title,omitempty\"`" + `
	// Its files.
	Files []string ` + "`json:\"files,omitempty\"`" + `
	// Its ratio.
	Ratio float64 ` + "`json:\"ratio,omitzero\"`" + `
}

// Shows a change.
//
//keel:tool name=show version=1 effect=read
func Show(ctx context.Context) (Diff, error) { return Diff{}, nil }
`

// inlineCases are the handler packages tests write out in full, by test:
// each is a package of the shared test module.
var inlineCases = map[string]map[string]string{
	"TestSchemaThatDoesNotCompile":       {"h/h.go": brokenPattern},
	"TestModelFacingText":                {"h/h.go": modelFacingText},
	"TestAuthorsWordsKept":               {"h/h.go": authorsWords},
	"TestHandlerPackageNamedAsTheOutput": {"admin/admin.go": namedAsTheOutput},
	"TestRequiredReport":                 {"h/h.go": requiredReport},
	"TestOmitEmptyUnderJSONv2":           {"h/h.go": omitEmptyV2},
}
