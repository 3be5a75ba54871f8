package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keelgen/keel/internal/testing/testmod"
)

// A user's module, written from the README: its own handlers, a go:generate
// line running the pinned keelgen, and a harness that calls the tools.
var userHandlers = `package notes

GENERATE

import (
	"context"
	"strings"

	"github.com/keelgen/keel/runtime"
)

// ForecastArgs ask for a forecast.
type ForecastArgs struct {
	// City is the city's name.
	City string ` + "`json:\"city\" jsonschema:\"minLength=1\"`" + `
	// Days ahead, 1 to 7.
	Days int ` + "`json:\"days,omitempty\" jsonschema:\"minimum=1,maximum=7\"`" + `
}

// Forecast is a weather forecast.
type Forecast struct {
	City    string   ` + "`json:\"city\"`" + `
	Summary []string ` + "`json:\"summary\"`" + `
}

// GetForecast returns the forecast for a city.
//
//keel:tool name=get_forecast version=2.0 effect=read errors=city_not_found timeout=3s
func GetForecast(ctx context.Context, args ForecastArgs) (Forecast, error) {
	if strings.EqualFold(args.City, "atlantis") {
		return Forecast{}, runtime.Fail("city_not_found", "No forecast exists for that city.")
	}
	days := args.Days
	if days == 0 {
		days = 1
	}
	f := Forecast{City: args.City}
	for i := 0; i < days; i++ {
		f.Summary = append(f.Summary, "sunny")
	}
	return f, nil
}

// Note is a saved note.
type Note struct {
	ID   int    ` + "`json:\"id\"`" + `
	Text string ` + "`json:\"text\"`" + `
}

// AddNote saves a note for the user.
//
//keel:tool name=add_note version=1.0 effect=write
func AddNote(ctx context.Context, noteText string, tags []string) (Note, error) {
	return Note{ID: len(noteText) + len(tags), Text: noteText}, nil
}
`

// generateLine is spliced in so that go generate in keel itself does not
// find it in this file.
var generateLine = "//go:" + "generate go tool keelgen -out ../notetools"

var userHarness = `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"example.com/user/notetools"
	"github.com/keelgen/keel/runtime"
)

func main() {
	var opts []runtime.Option
	if file := os.Getenv("KEEL_PUBKEY"); file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			panic(err)
		}
		opts = append(opts, runtime.WithRequiredSignature(pem))
	}
	exec, err := notetools.NewExecutor(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(3)
	}
	calls := []runtime.ToolCall{
		{ID: "1", Name: notetools.ToolGetForecast, Arguments: json.RawMessage(` + "`" + `{"city":"Oslo","days":2}` + "`" + `)},
		{ID: "2", Name: notetools.ToolGetForecast, Arguments: json.RawMessage(` + "`" + `{"city":"Atlantis"}` + "`" + `)},
		{ID: "3", Name: notetools.ToolGetForecast, Arguments: json.RawMessage(` + "`" + `{"city":"Oslo","days":9}` + "`" + `)},
		{ID: "4", Name: notetools.ToolAddNote, Arguments: json.RawMessage(` + "`" + `{"note_text":"buy milk","tags":["home"]}` + "`" + `)},
		{ID: "5", Name: "GetForecast", Arguments: json.RawMessage(` + "`" + `{"city":"Oslo"}` + "`" + `)},
	}
	enc := json.NewEncoder(os.Stdout)
	for _, c := range calls {
		enc.Encode(exec.Execute(context.Background(), runtime.ExecutionContext{AllowSideEffects: len(os.Args) > 1}, c))
	}
}
`

var userViews = `package main

import (
	"fmt"

	"example.com/user/notetools"
)

func main() {
	for _, m := range notetools.ModelTools() {
		fmt.Println("model", m.Name)
	}
	for _, t := range notetools.ToolSet().Tools() {
		fmt.Println("executor", t.Info().Name, t.Info().Version, t.Info().Effect)
	}
}
`

func TestUserModuleEndToEnd(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	dir := testmod.New(t, map[string]string{
		"notes/notes.go":      withGenerate(userHandlers),
		"cmd/harness/main.go": userHarness,
		"cmd/views/main.go":   userViews,
		"notetools/.gitkeep":  "",
	})
	testmod.MustGo(t, dir, "generate", "./...")
	for _, f := range []string{"keel_tools.go", "schemas/get_forecast.input.json", "schemas/get_forecast.output.json", "schemas/add_note.input.json", "schemas/add_note.output.json"} {
		if _, err := os.Stat(filepath.Join(dir, "notetools", f)); err != nil {
			t.Fatalf("generate did not write %s: %v", f, err)
		}
	}

	out := testmod.MustGo(t, dir, "run", "./cmd/harness")
	want := []string{
		`{"call_id":"1","tool_name":"get_forecast","tool_version":"2.0","ok":true,"data":{"city":"Oslo","summary":["sunny","sunny"]},"error":null}`,
		`{"call_id":"2","tool_name":"get_forecast","tool_version":"2.0","ok":false,"data":null,"error":{"code":"city_not_found","message":"No forecast exists for that city."}}`,
		`{"call_id":"3","tool_name":"get_forecast","tool_version":"2.0","ok":false,"data":null,"error":{"code":"invalid_arguments","message":"The arguments do not match the tool's input schema."}}`,
		`{"call_id":"4","tool_name":"add_note","tool_version":"1.0","ok":false,"data":null,"error":{"code":"approval_required","message":"This call needs approval before it can run."}}`,
		`{"call_id":"5","tool_name":"GetForecast","tool_version":null,"ok":false,"data":null,"error":{"code":"unknown_tool","message":"No tool with that name is available. Available tools: add_note, get_forecast."}}`,
	}
	if got := strings.Split(out, "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("harness output:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
	if out := testmod.MustGo(t, dir, "run", "./cmd/harness", "approve"); !strings.Contains(out, `"call_id":"4","tool_name":"add_note","tool_version":"1.0","ok":true,"data":{"id":9,"text":"buy milk"}`) {
		t.Fatalf("approved write:\n%s", out)
	}

	// A field added to an argument or a result struct without go generate
	// stops go build, in the generated package.
	for _, edit := range [][2]string{
		{"type ForecastArgs struct {", "type ForecastArgs struct {\n\tUnits string `json:\"units\"`"},
		{"type Forecast struct {", "type Forecast struct {\n\tUnits string `json:\"units\"`"},
	} {
		testmod.Write(t, dir, map[string]string{"notes/notes.go": withGenerate(strings.Replace(userHandlers, edit[0], edit[1], 1))})
		out, err := testmod.Go(dir, "build", "./...")
		if err == nil || !strings.Contains(out, "notetools/keel_codecs.go") || !strings.Contains(out, "cannot convert") {
			t.Fatalf("a stale tool set compiled after %q (err %v):\n%s", edit[1], err, out)
		}
	}
	testmod.Write(t, dir, map[string]string{"notes/notes.go": withGenerate(userHandlers)})

	// -check: current now; -diff: nothing changed.
	mustKeelgenIn(t, dir, "-check", "-out", "notetools", "./notes")
	if out := mustKeelgenIn(t, dir, "-diff", "-out", "notetools", "./notes"); !strings.HasPrefix(out, "tool set unchanged: sha256:") {
		t.Fatalf("-diff on an unchanged set:\n%s", out)
	}

	// Remove add_note's handler and regenerate: both views lose exactly that
	// tool, and harness code that names its constant stops compiling.
	src := userHandlers[:strings.Index(userHandlers, "// Note is a saved note.")]
	testmod.Write(t, dir, map[string]string{"notes/notes.go": withGenerate(src)})
	out, err := keelgenIn(dir, "-check", "-out", "notetools", "./notes")
	if err == nil || !strings.Contains(out, "stale: notetools/keel_tools.go") ||
		!strings.Contains(out, "orphaned: notetools/schemas/add_note.input.json") || !strings.Contains(out, "orphaned: notetools/schemas/add_note.output.json") {
		t.Fatalf("-check after removing a tool: err %v\n%s", err, out)
	}
	out, err = keelgenIn(dir, "-diff", "-out", "notetools", "./notes")
	if err == nil || !strings.Contains(out, "- add_note 1.0 (write): removed") {
		t.Fatalf("-diff after removing a tool: err %v\n%s", err, out)
	}
	testmod.MustGo(t, dir, "generate", "./...")
	if _, err := os.Stat(filepath.Join(dir, "notetools/schemas/add_note.input.json")); !os.IsNotExist(err) {
		t.Fatalf("orphaned schema not removed: %v", err)
	}
	views := testmod.MustGo(t, dir, "run", "./cmd/views")
	if views != "model get_forecast\nexecutor get_forecast 2.0 read" {
		t.Fatalf("views after removing add_note:\n%s", views)
	}
	out, err = testmod.Go(dir, "build", "./cmd/harness")
	if err == nil || !strings.Contains(out, "undefined: notetools.ToolAddNote") {
		t.Fatalf("harness naming a removed tool compiled (err %v):\n%s", err, out)
	}
}

// A generator that fails writes nothing: a broken handler package leaves the
// previous output byte for byte.
func TestFailedRunWritesNothing(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	dir := testmod.New(t, map[string]string{"notes/notes.go": withGenerate(userHandlers)})
	mustKeelgenIn(t, dir, "-out", "notetools", "./notes")
	before := snapshot(t, filepath.Join(dir, "notetools"))

	broken := strings.Replace(userHandlers, "//keel:tool name=add_note version=1.0 effect=write", "//keel:tool name=add_note version=1.0 effect=delete", 1)
	broken = strings.Replace(broken, "func GetForecast(ctx context.Context, args ForecastArgs)", "func GetForecast(args ForecastArgs)", 1)
	testmod.Write(t, dir, map[string]string{"notes/notes.go": withGenerate(broken)})
	out, err := keelgenIn(dir, "-out", "notetools", "./notes")
	if err == nil {
		t.Fatalf("keelgen accepted a broken package:\n%s", out)
	}
	for _, want := range []string{
		`notes/notes.go:29:17: get_forecast: first parameter must be context.Context`,
		`notes/notes.go:52:1: add_note: //keel:tool: effect "delete" must be read or write`,
		"keelgen: 2 problem(s); nothing written",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if after := snapshot(t, filepath.Join(dir, "notetools")); after != before {
		t.Fatal("a failed run changed the output directory")
	}
}

// The lock is verified when a program starts: a tampered schema stops it,
// a signature is checked against the given key, and regenerating after a
// change drops the signature that no longer verifies. A contract change
// without a version bump is refused, also against a base branch's lock.
func TestLockSignatureAndTamper(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	dir := testmod.New(t, map[string]string{"notes/notes.go": withGenerate(userHandlers), "cmd/harness/main.go": userHarness})
	keelgen := func(args ...string) (string, error) {
		return keelgenIn(dir, append([]string{"-out", "notetools"}, append(args, "./notes")...)...)
	}
	if out, err := keelgen(); err != nil {
		t.Fatalf("generate: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "notetools/keel.lock.json")); err != nil {
		t.Fatal(err)
	}

	// Tamper with an embedded schema: the program refuses to start.
	schemaFile := filepath.Join(dir, "notetools/schemas/get_forecast.input.json")
	orig, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	relaxed := strings.Replace(string(orig), `"maximum": 7`, `"maximum": 700`, 1)
	if relaxed == string(orig) {
		t.Fatalf("schema has no maximum to relax:\n%s", orig)
	}
	testmod.Write(t, dir, map[string]string{"notetools/schemas/get_forecast.input.json": relaxed})
	if out, err := testmod.Go(dir, "run", "./cmd/harness"); err == nil || !strings.Contains(out, "integrity") {
		t.Fatalf("tampered schema: err %v\n%s", err, out)
	}
	testmod.Write(t, dir, map[string]string{"notetools/schemas/get_forecast.input.json": string(orig)})

	// Sign; the harness requires the signature by the matching public key.
	mustKeelgenIn(t, dir, "-genkey", "release.pem")
	mustKeelgenIn(t, dir, "-genkey", "other.pem")
	if out, err := keelgen("-sign", "release.pem"); err != nil {
		t.Fatalf("-sign: %v\n%s", err, out)
	}
	env := func(key string) []string { return []string{"KEEL_PUBKEY=" + filepath.Join(dir, key)} }
	if out, err := testmod.GoEnv(dir, env("release.pem.pub"), "run", "./cmd/harness"); err != nil || !strings.Contains(out, `"call_id":"1"`) {
		t.Fatalf("signed set with the right key: err %v\n%s", err, out)
	}
	if out, err := testmod.GoEnv(dir, env("other.pem.pub"), "run", "./cmd/harness"); err == nil || !strings.Contains(out, "signature") {
		t.Fatalf("signed set with the wrong key: err %v\n%s", err, out)
	}
	if out, err := keelgen("-genkey", "release.pem"); err == nil {
		t.Fatalf("-genkey overwrote a key:\n%s", out)
	}

	// A contract change without a bump is refused; with the bump, the
	// regenerated lock drops the old signature, and the harness refuses to
	// start until it is signed again.
	base, err := os.ReadFile(filepath.Join(dir, "notetools/keel.lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	testmod.Write(t, dir, map[string]string{"base.lock.json": string(base)})
	changed := strings.Replace(userHandlers, "// AddNote saves a note for the user.", "// AddNote saves a note for the user, with tags.", 1)
	testmod.Write(t, dir, map[string]string{"notes/notes.go": withGenerate(changed)})
	for _, args := range [][]string{{"-check"}, {}, {"-check", "-lock", "base.lock.json"}} {
		out, err := keelgen(args...)
		lock := "keel.lock.json"
		if len(args) > 1 {
			lock = args[2]
		}
		if err == nil || !strings.Contains(out, "add_note: description changed since "+lock+"; bump version") {
			t.Fatalf("keelgen %v with an unbumped change: err %v\n%s", args, err, out)
		}
	}
	bumped := strings.Replace(changed, "name=add_note version=1.0", "name=add_note version=1.1", 1)
	testmod.Write(t, dir, map[string]string{"notes/notes.go": withGenerate(bumped)})
	if out, err := keelgen(); err != nil {
		t.Fatalf("bumped: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "notetools/keel.lock.json.sig")); !os.IsNotExist(err) {
		t.Fatalf("a signature of the old lock survived: %v", err)
	}
	if out, err := testmod.GoEnv(dir, env("release.pem.pub"), "run", "./cmd/harness"); err == nil || !strings.Contains(out, "missing") {
		t.Fatalf("unsigned new lock: err %v\n%s", err, out)
	}
	if out, err := keelgen("-diff", "-lock", "base.lock.json"); err == nil || !strings.Contains(out, "~ add_note 1.0 → 1.1") {
		t.Fatalf("-diff against the base lock: err %v\n%s", err, out)
	}
}

func withGenerate(src string) string { return strings.Replace(src, "GENERATE", generateLine, 1) }

// snapshot concatenates every file below dir with its path.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		b.WriteString(p + "\n" + string(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// keelgenIn runs the command in this test binary with dir as its working
// directory, as "go tool keelgen" would there, without a go command per run
// (go generate still runs the real "go tool keelgen").
func keelgenIn(dir string, args ...string) (string, error) {
	var out bytes.Buffer
	if code := runIn(dir, args, &out, &out); code != 0 {
		return strings.TrimSpace(out.String()), fmt.Errorf("exit status %d", code)
	}
	return strings.TrimSpace(out.String()), nil
}

func mustKeelgenIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := keelgenIn(dir, args...)
	if err != nil {
		t.Fatalf("keelgen %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// A module that lacks the schema reflector (here: dropped from go.mod by
// hand) gets keelgen's error naming the one command that fixes it, and that
// command works.
func TestMissingReflectorNamesTheFix(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	dir := testmod.New(t, map[string]string{"notes/notes.go": withGenerate(userHandlers)})
	if out, err := testmod.Go(dir, "mod", "edit", "-droprequire=github.com/invopop/jsonschema"); err != nil {
		t.Fatal(err, out)
	}
	out, err := testmod.GoEnv(dir, []string{"GOFLAGS=-mod=readonly"}, "list", "github.com/invopop/jsonschema")
	if err == nil {
		t.Skipf("the module still provides the reflector:\n%s", out)
	}
	out, err = keelgenIn(dir, "-out", "notetools", "./notes")
	want := "go get github.com/invopop/jsonschema@v"
	if err == nil || !strings.Contains(out, want) {
		t.Fatalf("keelgen without the reflector: err %v\n%s", err, out)
	}
	// One command, once; keelgen's own program is not named as the importer.
	if strings.Count(out, "go get ") != 1 || strings.Contains(out, ".keelgen-schema") {
		t.Errorf("keelgen's advice is not one command, or names its own program:\n%s", out)
	}
	fix := strings.Fields(out[strings.Index(out, "go get "):])[:3]
	if out, err := testmod.Go(dir, fix[1:]...); err != nil {
		t.Fatalf("the suggested %q failed: %v\n%s", strings.Join(fix, " "), err, out)
	}
	if out, err := keelgenIn(dir, "-out", "notetools", "./notes"); err != nil {
		t.Fatalf("after %q: %v\n%s", strings.Join(fix, " "), err, out)
	}
}

// A handler that imports a library its module does not require yet (the
// README's setup, then a decimal amount) gets a diagnostic at the import
// that names the go get command, and that command fixes it.
func TestMissingModuleNamesGoGet(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	dir := testmod.New(t, map[string]string{"pay/pay.go": `package pay

import (
	"context"

	"github.com/shopspring/decimal"
)

//keel:text github.com/shopspring/decimal.Decimal pattern=^[0-9]+(\.[0-9]+)?$

// Payment is an amount to pay.
type Payment struct {
	// Amount is the sum, in euros.
	Amount decimal.Decimal ` + "`json:\"amount\"`" + `
}

// Pay records a payment.
//
//keel:tool name=pay version=1.0 effect=write
func Pay(ctx context.Context, p Payment) (Payment, error) { return p, nil }
`})
	// keel's graph has decimal, so the user's module knows its version but
	// has no go.sum lines for it: what the new user met.
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.SplitAfter(string(sum), "\n") {
		if !strings.HasPrefix(line, "github.com/shopspring/decimal ") {
			kept = append(kept, line)
		}
	}
	testmod.Write(t, dir, map[string]string{"go.sum": strings.Join(kept, "")})
	// Run where go generate runs it, in the package: the position is still
	// the module's path of the file.
	out, err := keelgenIn(filepath.Join(dir, "pay"), "-out", "../paytools", ".")
	want := "\npay/pay.go:6:2: could not import github.com/shopspring/decimal: "
	if err == nil || !strings.Contains("\n"+out, want) || !strings.Contains(out, "; run: go get github.com/shopspring/decimal") {
		t.Fatalf("keelgen without decimal in go.mod: err %v\n%s\nwant %q and the go get command", err, out, want)
	}
	if out, err := testmod.Go(dir, "get", "github.com/shopspring/decimal"); err != nil {
		t.Fatalf("the suggested go get failed: %v\n%s", err, out)
	}
	if out, err := keelgenIn(dir, "-out", "paytools", "./pay"); err != nil {
		t.Fatalf("after go get: %v\n%s", err, out)
	}
}

// A module whose go.mod the go command wants updated (a handler imports a
// package of keel's graph its module does not require) matches no
// packages: keelgen says why, in the go command's words, and the fix.
func TestGoModNeedingTidySaysSo(t *testing.T) {
	testmod.EndToEnd(t)
	t.Parallel()
	dir := testmod.New(t, map[string]string{"ids/ids.go": `package ids

import (
	"context"

	"github.com/google/uuid"
)

// Out is an id.
type Out struct {
	// ID is new.
	ID string ` + "`json:\"id\"`" + `
}

// NewID makes an id.
//
//keel:tool name=new_id version=1.0 effect=read
func NewID(ctx context.Context) (Out, error) { return Out{ID: uuid.NewString()}, nil }
`})
	if out, err := testmod.Go(dir, "mod", "edit", "-droprequire=github.com/google/uuid"); err != nil {
		t.Fatal(err, out)
	}
	out, err := keelgenIn(dir, "-out", "idtools", "./ids")
	if err == nil || !strings.Contains(out, "matched no packages: the go command says: go: updates to go.mod needed") || !strings.Contains(out, "go mod tidy") {
		t.Fatalf("keelgen with a go.mod to update: err %v\n%s", err, out)
	}
}
