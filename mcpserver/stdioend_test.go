package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
	"github.com/keelgen/keel/runtime/report"
)

// stepsServer serves "steps", which reports its progress n times and
// then, once release is closed (nil: at once), answers.
func stepsServer(t *testing.T, n int, release <-chan struct{}, log *slog.Logger) *mcpserver.Server {
	t.Helper()
	tool := runtime.NewTool(runtime.ToolInfo{Name: "steps", Version: "1", Effect: runtime.EffectRead, Description: "Reports its steps.", Timeout: 20 * time.Second,
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (struct{}, error) {
			for i := 1; i <= n; i++ {
				report.Progress(ctx, float64(i), float64(n+1), fmt.Sprintf("step %d", i))
			}
			if release != nil {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return struct{}{}, nil
		}))
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	return mcpserver.New(exec, mcpserver.Options{Logger: log})
}

// runPiped serves s over a pipe, writes input at once, closes it, and
// returns every line the server wrote until it ended, and Run's error.
func runPiped(t *testing.T, s *mcpserver.Server, input string, release chan struct{}) ([]map[string]any, error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		err := s.Run(ctx, &mcp.IOTransport{Reader: inR, Writer: outW})
		outW.Close()
		done <- err
	}()
	go func() {
		io.WriteString(inW, input)
		inW.Close() // the client has said everything: end of input
	}()
	var lines []map[string]any
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a line that is not JSON: %q", sc.Bytes())
		}
		lines = append(lines, m)
		if release != nil && len(lines) == 2 { // the initialize answer and a progress: the call runs
			close(release)
			release = nil
		}
	}
	if release != nil {
		close(release)
	}
	return lines, <-done
}

const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// A client that writes its calls and closes its input (a shell pipe, or
// a client that closes stdin and waits, as the stdio transport says) gets
// every answer: the server reads to the end, lets the calls in flight
// end, and only then returns. Every progress notification comes before
// its call's result.
func TestStdioAnswersCallsRunningAtEndOfInput(t *testing.T) {
	t.Parallel()
	for round := range 10 {
		release := make(chan struct{})
		s := stepsServer(t, 20, release, nil)
		input := initialize + "\n" + initialized + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"p"},"name":"steps","arguments":{}}}` + "\n"
		lines, err := runPiped(t, s, input, release)
		if err != nil && err != io.EOF {
			t.Errorf("round %d: Run: %v", round, err)
		}
		result, lastProgress, progress := -1, -1, 0
		for i, m := range lines {
			if m["id"] == float64(2) {
				result = i
				if m["result"] == nil || m["result"].(map[string]any)["isError"] == true {
					t.Errorf("round %d: the call was answered %v", round, m)
				}
			}
			if m["method"] == "notifications/progress" {
				lastProgress, progress = i, progress+1
			}
		}
		if result < 0 {
			t.Fatalf("round %d: the call running at end of input was never answered; the server wrote %v", round, lines)
		}
		if progress == 0 || lastProgress > result {
			t.Fatalf("round %d: %d progress notifications, the last at line %d, the result at %d", round, progress, lastProgress, result)
		}
	}
}

// initialize, initialized, a call, tools/list and ping written at once,
// and the input closed: the call waits for the session the SDK makes of
// initialize, and runs, and every request is answered before the server
// ends (the SDK alone drops its answers at the end of input). A call
// before any initialize is refused, with a line in the protected log
// saying why.
func TestStdioCallWrittenWithInitialize(t *testing.T) {
	t.Parallel()
	for round := range 40 {
		s := stepsServer(t, 1, nil, nil)
		input := initialize + "\n" + initialized + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps","arguments":{}}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"tools/list"}` + "\n" + `{"jsonrpc":"2.0","id":4,"method":"ping"}` + "\n"
		lines, _ := runPiped(t, s, input, nil)
		answered := map[float64]bool{}
		for _, m := range lines {
			id, _ := m["id"].(float64)
			answered[id] = true
			if m["error"] != nil || m["result"] == nil {
				t.Fatalf("round %d: request %v written with initialize was answered %v", round, m["id"], m)
			}
		}
		if len(lines) != 4 || !answered[1] || !answered[2] || !answered[3] || !answered[4] {
			t.Fatalf("round %d: not every request was answered once: %v", round, lines)
		}
	}

	var logged strings.Builder
	s := stepsServer(t, 1, nil, slog.New(slog.NewTextHandler(&logged, nil)))
	lines, _ := runPiped(t, s, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps","arguments":{}}}`+"\n", nil)
	if len(lines) != 1 || lines[0]["error"] == nil || lines[0]["id"] != float64(2) {
		t.Fatalf("a call before initialize: %v", lines)
	}
	if !strings.Contains(logged.String(), "before initialize") {
		t.Errorf("the protected log does not say why: %s", logged.String())
	}
}
