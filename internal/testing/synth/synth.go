// Package synth writes synthetic tool modules of any size, for measuring
// keel at scale: N annotated tools in ten shapes, half with an argument
// struct and half with plain parameters, each with a minLength string, a
// bounded integer, an enum, an optional member and a slice. Tool i is named
// incident_lookup_i, so an unknown name shaped like a real one is easy to
// make. cmd/scale measures such modules; the README shows its command.
package synth

import (
	"fmt"
	"strings"
)

// Shapes is how many distinct argument and result types the tools share.
const Shapes = 10

// Module paths inside the synthetic module.
const (
	Handlers = "handlers" // the annotated handlers, with the go:generate line
	Tools    = "tools"    // keelgen's output
	Bench    = "bench"    // benchmarks of the executor over the tools
)

// ToolName is the name of tool i.
func ToolName(i int) string { return fmt.Sprintf("incident_lookup_%d", i) }

// FilesIn returns the module's files (slash paths → content) for n tools;
// the caller adds go.mod (testmod.Make). rev is written into the handlers
// as a constant, so a new rev changes the package's export data and forces
// every dependent package to recompile. With packages above 1, the tools
// are spread over handler packages (handlers/p0, handlers/p1, …; tool i in
// package i % packages), generated into one set by one go:generate line
// over ./... .
func FilesIn(n, rev, packages int) map[string]string {
	files := map[string]string{
		Bench + "/bench_test.go": benchmarks(n),
		"cmd/start/main.go":      startProgram,
		"cmd/lookup/main.go":     fmt.Sprintf(lookupProgram, n),
	}
	if packages <= 1 {
		files[Handlers+"/shapes.go"] = shapes("handlers")
		files[HandlersFile(1)] = HandlersSource(n, rev, 0, 1)
		return files
	}
	files[Handlers+"/generate.go"] = "// Package handlers generates the tool set of its subpackages.\npackage handlers\n\n" + generateLine + " ./...\n"
	for k := range packages {
		name := fmt.Sprintf("p%d", k)
		files[Handlers+"/"+name+"/shapes.go"] = shapes(name)
		files[Handlers+"/"+name+"/handlers.go"] = handlers(name, n, rev, 0, k, packages, false)
	}
	return files
}

// HandlersFile is the file that FilesIn writes rev to (with several
// packages, the first package's).
func HandlersFile(packages int) string {
	if packages <= 1 {
		return Handlers + "/handlers.go"
	}
	return Handlers + "/p0/handlers.go"
}

// HandlersSource is that file's content at rev. schemaRev, when above 0,
// is an edit of the tools too: it is in the description of every
// plain-parameter tool's first parameter, whose input schema so changes,
// and in the tool's version (1.schemaRev), bumped as the change requires.
func HandlersSource(n, rev, schemaRev, packages int) string {
	if packages <= 1 {
		return handlers("handlers", n, rev, schemaRev, 0, 1, true)
	}
	return handlers("p0", n, rev, schemaRev, 0, packages, false)
}

func shapes(pkg string) string {
	var b strings.Builder
	b.WriteString(`package ` + pkg + `

import "github.com/invopop/jsonschema"

// Query is a search text of at least one character.
type Query string

func (Query) JSONSchema() *jsonschema.Schema {
	one := uint64(1)
	return &jsonschema.Schema{Type: "string", MinLength: &one, Description: "What to look for."}
}

// Limit is how many records to return, 1 to 100.
type Limit int

func (Limit) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Minimum: "1", Maximum: "100", Description: "How many records to return."}
}

// Mode is how thoroughly to look.
type Mode string

func (Mode) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: []any{"fast", "full"}, Description: "How thoroughly to look."}
}
`)
	for s := range Shapes {
		fmt.Fprintf(&b, `
// Args%[1]d is the argument struct of shape %[1]d.
type Args%[1]d struct {
	Query%[1]d string   `+"`"+`json:"query_%[1]d" jsonschema:"minLength=1"`+"`"+`
	Limit%[1]d int      `+"`"+`json:"limit_%[1]d" jsonschema:"minimum=1,maximum=100"`+"`"+`
	Mode%[1]d  string   `+"`"+`json:"mode_%[1]d" jsonschema:"enum=fast,enum=full"`+"`"+`
	Note%[1]d  string   `+"`"+`json:"note_%[1]d,omitempty"`+"`"+`
	Tags%[1]d  []string `+"`"+`json:"tags_%[1]d"`+"`"+`
}

// Result%[1]d is the result of shape %[1]d.
type Result%[1]d struct {
	ID    string   `+"`"+`json:"id"`+"`"+`
	Count int      `+"`"+`json:"count"`+"`"+`
	Level string   `+"`"+`json:"level" jsonschema:"enum=low,enum=high"`+"`"+`
	Items []string `+"`"+`json:"items"`+"`"+`
}
`, s)
	}
	return b.String()
}

// generateLine is the handlers' go:generate line, built so that go
// generate in keel's own tree does not take it for one of keel's.
const generateLine = "//go" + ":generate go tool keelgen -out ../tools"

// handlers is the file of the tools i with i % packages == k.
func handlers(pkg string, n, rev, schemaRev, k, packages int, generate bool) string {
	var b strings.Builder
	line := ""
	if generate {
		line = generateLine + "\n"
	}
	fmt.Fprintf(&b, `// Package %s holds synthetic tools.
package %s

%s
import "context"

// Rev changes with each measured edit.
const Rev = %d
`, pkg, pkg, line, rev)
	for i := k; i < n; i += packages {
		s := i % Shapes
		fmt.Fprintf(&b, "\n// Lookup%[1]d looks up incident records of kind %[1]d.\n//\n//keel:tool name=%[2]s version=1.%[3]d effect=read\n", i, ToolName(i), schemaRev)
		if i%2 == 1 && schemaRev > 0 {
			fmt.Fprintf(&b, "//keel:param query The text to search for (edit %d).\n", schemaRev)
		}
		if i%2 == 0 {
			fmt.Fprintf(&b, "func Lookup%[1]d(ctx context.Context, args Args%[2]d) (Result%[2]d, error) {\n\treturn Result%[2]d{ID: args.Query%[2]d, Count: args.Limit%[2]d, Level: \"low\", Items: args.Tags%[2]d}, nil\n}\n", i, s)
		} else {
			fmt.Fprintf(&b, "func Lookup%[1]d(ctx context.Context, query Query, limit Limit, mode Mode, note *string, tags []string) (Result%[2]d, error) {\n\treturn Result%[2]d{ID: string(query), Count: int(limit), Level: \"high\", Items: tags}, nil\n}\n", i, s)
		}
	}
	return b.String()
}

// ValidArguments are valid arguments of tool i.
func ValidArguments(i int) string {
	if i%2 == 0 {
		s := i % Shapes
		return fmt.Sprintf(`{"query_%[1]d":"db","limit_%[1]d":5,"mode_%[1]d":"fast","tags_%[1]d":["a","b"]}`, s)
	}
	return `{"query":"db","limit":5,"mode":"fast","note":"n","tags":["a","b"]}` // a plain *string parameter is required, not nullable
}

func benchmarks(n int) string {
	return fmt.Sprintf(`package bench

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/keelgen/keel/runtime"

	"example.com/synth/tools"
)

// The last tool's call, and an unknown name shaped like a real one (same
// length, same prefix): the dispatch cost at %[1]d tools.
func BenchmarkExecute(b *testing.B) {
	exec, err := tools.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	calls := map[string]runtime.ToolCall{
		"valid":   {ID: "c", Name: %[2]q, Arguments: json.RawMessage(%[3]q)},
		"unknown": {ID: "c", Name: %[4]q, Arguments: json.RawMessage(%[3]q)},
	}
	for name, call := range calls {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := exec.Execute(context.Background(), runtime.ExecutionContext{}, call)
				if r.OK != (name == "valid") || (name == "unknown" && r.Code() != runtime.CodeUnknownTool) {
					b.Fatalf("%%s: %%+v", name, r.Error)
				}
			}
		})
	}
}
`, n, ToolName(n-1), ValidArguments(n-1), UnknownName(n))
}

// UnknownName is shaped like the names of n tools: the last tool's name
// with its last byte changed, so it has a real name's length and prefix.
func UnknownName(n int) string {
	name := ToolName(n - 1)
	return name[:len(name)-1] + "x"
}

// startProgram times one cold NewExecutor in a fresh process and prints
// the duration in nanoseconds.
const startProgram = `package main

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/keelgen/keel/runtime"

	"example.com/synth/tools"
)

func main() {
	start := time.Now()
	_, err := tools.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)))
	d := time.Since(start)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(d.Nanoseconds())
}
`

// lookupProgram checks the generated Lookup: every tool by its exact name,
// no near miss (a byte changed, cut, extended) by another tool's name. It
// prints "ok N".
const lookupProgram = `package main

import (
	"fmt"
	"os"

	"example.com/synth/tools"
)

func main() {
	bad := 0
	for i := range %d {
		name := fmt.Sprintf("incident_lookup_%%d", i)
		if t := tools.ToolSet().Lookup(name); t == nil || t.Info().Name != name {
			fmt.Println("not found:", name)
			bad++
		}
		for p := range len(name) {
			b := []byte(name)
			b[p] ^= 1
			if t := tools.ToolSet().Lookup(string(b)); t != nil && t.Info().Name != string(b) {
				fmt.Println("near miss found:", string(b))
				bad++
			}
		}
		for _, miss := range []string{name + "0", name[:len(name)-1] + "x", name[1:], "x" + name, name + " "} {
			if t := tools.ToolSet().Lookup(miss); t != nil && t.Info().Name != miss {
				fmt.Println("near miss found:", miss)
				bad++
			}
		}
	}
	if tools.ToolSet().Lookup("") != nil || tools.ToolSet().Lookup("incident_lookup_99999") != nil {
		fmt.Println("an unknown name was found")
		bad++
	}
	if bad > 0 {
		os.Exit(1)
	}
	fmt.Println("ok", len(tools.ToolSet().Tools()))
}
`
