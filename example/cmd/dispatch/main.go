// Command dispatch sends tool calls through the incident tool set's executor.
//
// Without flags it sends the four calls of keel's story and prints a table of
// their results, then the successful result as indented JSON. With -json it
// prints the four results, one JSON object per line. With -calls FILE (- for
// standard input) it reads one call per line,
//
//	{"call_id": "c1", "name": "lookup_incident", "arguments": {"incident_id": "INC-001"}}
//
// and prints one result per line. The arguments go to the executor as the
// exact bytes of the line, so its verdict on them stands. A line that is not
// a call object, or is longer than 4 MiB, gets a result with code
// invalid_call (the only code this demo adds; the executor never sees such a
// line), and reading goes on with the next line.
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
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/keelgen/keel/example"
	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

// codeInvalidCall is this demo's code for an input line that is not a call.
const codeInvalidCall runtime.Code = "invalid_call"

// maxLine bounds one input line: the executor's default cap of 1 MiB of
// arguments, escaped as a JSON string if need be, plus the envelope.
const maxLine = 4 << 20

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dispatch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the four story results as JSON, one per line")
	callsFile := fs.String("calls", "", "read tool calls, one JSON object per line, from `FILE` (- for standard input)")
	allow := fs.Bool("allow-side-effects", false, "set AllowSideEffects in the execution context, so write tools may run")
	approvalLoop := fs.Bool("approvals", false, "show the approval loop: call-write refused, approved for its exact arguments, run, replay refused")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// The protected log: internal detail goes to stderr, never into results.
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	if *approvalLoop {
		// A demo key: a real harness keeps its approval key out of the code.
		grantKey := grant.HMACKey([]byte("dispatch demo approval key: not a secret"))
		exec, err := generated.NewExecutor(runtime.WithLogger(logger), runtime.WithApprovals(grantKey, memstore.NewReplayStore()))
		if err != nil {
			return fail(stderr, err)
		}
		return approvals(stdout, stderr, exec, grantKey)
	}
	exec, err := generated.NewExecutor(runtime.WithLogger(logger))
	if err != nil {
		return fail(stderr, err)
	}
	ctx := context.Background()
	ec := runtime.ExecutionContext{AllowSideEffects: *allow, Principal: "demo"}
	execute := func(call runtime.ToolCall) runtime.ToolResult { return exec.Execute(ctx, ec, call) }
	switch {
	case *callsFile != "":
		return callsFrom(*callsFile, stdin, stdout, stderr, execute)
	case *asJSON:
		return storyJSON(stdout, stderr, execute)
	default:
		return storyTable(stdout, stderr, execute)
	}
}

func fail(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "dispatch:", err)
	return 1
}

// callsFrom answers the calls in file (- for stdin), one per line.
func callsFrom(file string, stdin io.Reader, stdout, stderr io.Writer, execute func(runtime.ToolCall) runtime.ToolResult) int {
	in := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return fail(stderr, err)
		}
		defer f.Close()
		in = f
	}
	return dispatchLines(bufio.NewReader(in), stdout, stderr, execute)
}

// storyJSON prints the results of the story's four calls, one per line.
func storyJSON(stdout, stderr io.Writer, execute func(runtime.ToolCall) runtime.ToolResult) int {
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	for _, c := range example.StoryCalls() {
		if err := enc.Encode(execute(c)); err != nil {
			return fail(stderr, err)
		}
	}
	return 0
}

// storyTable prints the story's results as a table, then the first
// successful result as indented JSON.
func storyTable(stdout, stderr io.Writer, execute func(runtime.ToolCall) runtime.ToolResult) int {
	calls := example.StoryCalls()
	results := make([]runtime.ToolResult, len(calls))
	for i, c := range calls {
		results[i] = execute(c)
	}
	printTable(stdout, results)
	for _, r := range results {
		if r.OK {
			fmt.Fprintln(stdout)
			enc := json.NewEncoder(stdout)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(r); err != nil {
				return fail(stderr, err)
			}
			break
		}
	}
	return 0
}

// approvals runs the loop: a write is refused with an approval request, a
// person approves exactly that call, it runs once, and a replay is refused.
func approvals(stdout, stderr io.Writer, exec *runtime.Executor, key grant.Key) int {
	ctx := context.Background()
	ec := runtime.ExecutionContext{Tenant: "acme", Principal: "alice"}
	write := example.StoryCalls()[3]
	show := func(step string, r runtime.ToolResult) {
		b, _ := json.Marshal(r)
		fmt.Fprintf(stdout, "%s\n  %s\n", step, b)
	}
	r := exec.Execute(ctx, ec, write)
	show("1. call-write, no approval:", r)
	if r.Error == nil || r.Error.Approval == nil {
		fmt.Fprintln(stderr, "dispatch: call-write was not sent for approval")
		return 1
	}
	req := r.Error.Approval
	approve := func() (string, error) {
		return grant.Issue(key, req.Grant(ec.Tenant, ec.Principal, time.Now().Add(5*time.Minute)))
	}
	grant, err := approve()
	if err != nil {
		fmt.Fprintln(stderr, "dispatch:", err)
		return 1
	}
	fmt.Fprintf(stdout, "2. a person approves %s %s with arguments %s, for five minutes\n", req.Tool, req.Version, req.ArgumentsDigest)
	ec.Grant = grant
	show("3. the same call with the grant:", exec.Execute(ctx, ec, write))
	show("4. the grant replayed:", exec.Execute(ctx, ec, write))
	if ec.Grant, err = approve(); err != nil {
		fmt.Fprintln(stderr, "dispatch:", err)
		return 1
	}
	other := write
	other.Arguments = json.RawMessage(`{"incident_id": "INC-001", "summary": "Drop the auth-api database"}`)
	show("5. a new grant for the approved arguments, presented with other arguments:", exec.Execute(ctx, ec, other))
	return 0
}

// dispatchLines answers each line of in with one result line. A line over
// maxLine is answered and skipped to its end; nothing stops the reading but
// the end of the input or a failure to read or write.
func dispatchLines(in *bufio.Reader, stdout, stderr io.Writer, execute func(runtime.ToolCall) runtime.ToolResult) int {
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(in, maxLine)
		if err != nil && err != io.EOF {
			fmt.Fprintln(stderr, "dispatch: reading calls:", err)
			return 1
		}
		var res runtime.ToolResult
		line = bytes.TrimSpace(line)
		switch {
		case tooLong:
			res = invalidCall(n, fmt.Sprintf("The line is longer than %d bytes.", maxLine))
		case len(line) == 0:
			if err == io.EOF {
				return 0
			}
			continue
		default:
			call, perr := parseCall(line)
			if perr != nil {
				res = invalidCall(n, perr.Error())
			} else {
				res = execute(call)
			}
		}
		if err := enc.Encode(res); err != nil {
			fmt.Fprintln(stderr, "dispatch:", err)
			return 1
		}
		if err == io.EOF {
			return 0
		}
	}
}

func invalidCall(line int, msg string) runtime.ToolResult {
	return runtime.ToolResult{CallID: fmt.Sprintf("line-%d", line), Error: &runtime.ToolError{Code: codeInvalidCall, Message: msg}}
}

// readLine reads up to the next newline. A line longer than limit is read
// to its end but not kept: tooLong says so.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err != bufio.ErrBufferFull {
			return line, tooLong, err
		}
	}
}

// envelope reads the line's own members; the arguments are kept as raw
// bytes, whatever they hold, for the executor to judge.
var envelope = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// parseCall reads one call object: exactly the members call_id, name and
// arguments, each at most once, call_id and name as strings.
func parseCall(line []byte) (runtime.ToolCall, error) {
	errNotCall := fmt.Errorf("the line is not a tool call object with call_id, name and arguments")
	dec := jsontext.NewDecoder(bytes.NewReader(line), envelope...)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return runtime.ToolCall{}, errNotCall
	}
	var call runtime.ToolCall
	seen := map[string]bool{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil || tok.Kind() != '"' {
			return runtime.ToolCall{}, errNotCall
		}
		name := tok.String()
		v, err := dec.ReadValue()
		if err != nil || seen[name] {
			return runtime.ToolCall{}, errNotCall
		}
		seen[name] = true
		switch name {
		case "call_id":
			err = jsonv2.Unmarshal(v, &call.ID)
		case "name":
			err = jsonv2.Unmarshal(v, &call.Name)
		case "arguments":
			call.Arguments = json.RawMessage(bytes.Clone(v))
		default:
			err = errNotCall
		}
		if err != nil {
			return runtime.ToolCall{}, errNotCall
		}
	}
	if _, err := dec.ReadToken(); err != nil { // the closing brace
		return runtime.ToolCall{}, errNotCall
	}
	if _, err := dec.ReadToken(); err != io.EOF { // nothing after the object
		return runtime.ToolCall{}, errNotCall
	}
	return call, nil
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
