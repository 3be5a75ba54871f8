// Command dispatch sends tool calls through the incident tool set's executor.
//
// Without flags it sends the four calls of keel's story and prints a table of
// their results, then the successful result as indented JSON. With -json it
// prints the four results, one JSON object per line. With -calls FILE (- for
// standard input) it reads one call per line,
//
//	{"call_id": "c1", "name": "lookup_incident", "arguments": {"incident_id": "INC-001"}}
//
// and prints one result per line. A line that is not a call object gets a
// result with code invalid_call (the only code this demo adds; the executor
// never sees such a line).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/keelgen/keel/example"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/runtime"
)

// codeInvalidCall is this demo's code for an input line that is not a call.
const codeInvalidCall runtime.Code = "invalid_call"

// maxLine bounds one input line (the executor's own limit is 1 MiB of arguments).
const maxLine = 2 << 20

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dispatch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the four story results as JSON, one per line")
	callsFile := fs.String("calls", "", "read tool calls, one JSON object per line, from `FILE` (- for standard input)")
	allow := fs.Bool("allow-side-effects", false, "set AllowSideEffects in the execution context, so write tools may run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// The protected log: internal detail goes to stderr, never into results.
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	exec, err := generated.NewExecutor(runtime.WithLogger(logger))
	if err != nil {
		fmt.Fprintln(stderr, "dispatch:", err)
		return 1
	}
	ec := runtime.ExecutionContext{AllowSideEffects: *allow, Principal: "demo"}
	ctx := context.Background()
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)

	if *callsFile != "" {
		in := stdin
		if *callsFile != "-" {
			f, err := os.Open(*callsFile)
			if err != nil {
				fmt.Fprintln(stderr, "dispatch:", err)
				return 1
			}
			defer f.Close()
			in = f
		}
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), maxLine)
		for n := 1; sc.Scan(); n++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			call, err := parseCall(line)
			var res runtime.ToolResult
			if err != nil {
				res = runtime.ToolResult{CallID: fmt.Sprintf("line-%d", n),
					Error: &runtime.ToolError{Code: codeInvalidCall, Message: err.Error()}}
			} else {
				res = exec.Execute(ctx, ec, call)
			}
			if err := enc.Encode(res); err != nil {
				fmt.Fprintln(stderr, "dispatch:", err)
				return 1
			}
		}
		if err := sc.Err(); err != nil {
			fmt.Fprintln(stderr, "dispatch: reading calls:", err)
			return 1
		}
		return 0
	}

	results := make([]runtime.ToolResult, len(example.StoryCalls))
	for i, c := range example.StoryCalls {
		results[i] = exec.Execute(ctx, ec, c)
	}
	if *asJSON {
		for _, r := range results {
			if err := enc.Encode(r); err != nil {
				fmt.Fprintln(stderr, "dispatch:", err)
				return 1
			}
		}
		return 0
	}
	printTable(stdout, results)
	for _, r := range results {
		if r.OK {
			fmt.Fprintln(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(r); err != nil {
				fmt.Fprintln(stderr, "dispatch:", err)
				return 1
			}
			break
		}
	}
	return 0
}

// callLine is one input line; its members are matched exactly and unknown
// members are rejected, like the executor's own arguments.
type callLine struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func parseCall(line []byte) (runtime.ToolCall, error) {
	var c callLine
	if err := jsonv2.Unmarshal(line, &c, jsonv2.RejectUnknownMembers(true)); err != nil {
		return runtime.ToolCall{}, fmt.Errorf("the line is not a tool call object with call_id, name and arguments")
	}
	return runtime.ToolCall{ID: c.CallID, Name: c.Name, Arguments: c.Arguments}, nil
}

func printTable(w io.Writer, results []runtime.ToolResult) {
	fmt.Fprintln(w, "| call_id | name | version | ok | code |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	for _, r := range results {
		version, code := "null", "—"
		if r.ToolVersion != nil {
			version = *r.ToolVersion
		}
		if r.Error != nil {
			code = string(r.Error.Code)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %t | %s |\n", r.CallID, r.ToolName, version, r.OK, code)
	}
}
