package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// Hand-built tools, made the way keelgen's generated code makes them.

type echoArgs struct {
	Text  string `json:"text"`
	Count int    `json:"count,omitempty"`
	Small int8   `json:"small,omitempty"`
}

type echoResult struct {
	Text  string   `json:"text"`
	Tags  []string `json:"tags"`
	Level string   `json:"level"`
	Score float64  `json:"score"`
}

const echoIn = `{"type":"object","properties":{"text":{"type":"string","pattern":"^[a-z]+$"},"count":{"type":"integer"},"small":{"type":"integer"}},"required":["text"],"additionalProperties":false}`
const echoOut = `{"type":"object","properties":{"text":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"level":{"type":"string","enum":["low","high"]},"score":{"type":"number"}},"required":["text","tags","level","score"],"additionalProperties":false}`

// fixture records what ran, so tests can assert that a stage was never reached.
type fixture struct {
	handlerCalls atomic.Int32
	policyCalls  atomic.Int32
	log          bytes.Buffer
	exec         *runtime.Executor
}

// behave is what the handler does for the given text.
func newFixture(t *testing.T, effect runtime.Effect, behave func(ctx context.Context, a echoArgs) (echoResult, error), opts ...runtime.Option) *fixture {
	t.Helper()
	f := &fixture{}
	tool := runtime.NewTool(runtime.ToolInfo{
		Name: "echo", Version: "2.1", Effect: effect, Description: "Echo text.",
		InputSchema: json.RawMessage(echoIn), OutputSchema: json.RawMessage(echoOut),
		Errors: []runtime.Code{"text_not_found"}, Timeout: echoTimeout,
	}, runtime.Handle(func(ctx context.Context, a echoArgs) (echoResult, error) {
		f.handlerCalls.Add(1)
		return behave(ctx, a)
	}))
	counting := runtime.PolicyFunc(func(ctx context.Context, req runtime.PolicyRequest) runtime.Decision {
		f.policyCalls.Add(1)
		return runtime.SideEffectPolicy{}.Decide(ctx, req)
	})
	opts = append([]runtime.Option{runtime.WithPolicy(counting),
		runtime.WithLogger(slog.New(slog.NewJSONHandler(&f.log, nil)))}, opts...)
	exec, err := runtime.NewExecutor(keeltest.Of(tool), opts...)
	if err != nil {
		t.Fatal(err)
	}
	f.exec = exec
	return f
}

// echoTimeout is the echo tool's declared timeout (timeout= in a //keel:tool line).
const echoTimeout = 200 * time.Millisecond

func okEcho(_ context.Context, a echoArgs) (echoResult, error) {
	return echoResult{Text: a.Text, Tags: []string{}, Level: "low", Score: 1}, nil
}

func call(args string) runtime.ToolCall {
	return runtime.ToolCall{ID: "c1", Name: "echo", Arguments: json.RawMessage(args)}
}

func marshal(t *testing.T, r runtime.ToolResult) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestResultJSONContract(t *testing.T) {
	f := newFixture(t, runtime.EffectRead, okEcho)
	ok := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`))
	wantOK := `{"call_id":"c1","tool_name":"echo","tool_version":"2.1","ok":true,"data":{"text":"hi","tags":[],"level":"low","score":1},"error":null}`
	if s := marshal(t, ok); s != wantOK {
		t.Errorf("success JSON =\n%s\nwant\n%s", s, wantOK)
	}

	unknown := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "c2", Name: "delete_prod", Arguments: json.RawMessage(`{}`)})
	wantUnknown := `{"call_id":"c2","tool_name":"delete_prod","tool_version":null,"ok":false,"data":null,"error":{"code":"unknown_tool","message":"No tool with that name is available. Available tools: echo."}}`
	if s := marshal(t, unknown); s != wantUnknown {
		t.Errorf("unknown JSON =\n%s\nwant\n%s", s, wantUnknown)
	}
}

func TestUnknownToolRunsNothing(t *testing.T) {
	f := newFixture(t, runtime.EffectRead, okEcho)
	for _, name := range []string{"Echo", "echo ", " echo", "echo\x00", "еcho" /* Cyrillic е */, "", "okEcho", "newFixture", strings.Repeat("e", 10<<10)} {
		r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "x", Name: name, Arguments: json.RawMessage(`{"text":"hi"}`)})
		if r.Code() != runtime.CodeUnknownTool || r.ToolVersion != nil || r.OK || r.Data != nil {
			t.Errorf("name %.20q: got %s", name, marshal(t, r))
		}
		if strings.TrimSpace(name) != "echo" && name != "" && strings.Contains(r.Error.Message, name) {
			t.Errorf("name %.20q echoed in message", name)
		}
	}
	if f.handlerCalls.Load() != 0 || f.policyCalls.Load() != 0 {
		t.Fatalf("handler ran %d times, policy %d times for unknown tools", f.handlerCalls.Load(), f.policyCalls.Load())
	}
}

func TestInvalidArgumentsReachNeitherPolicyNorHandler(t *testing.T) {
	f := newFixture(t, runtime.EffectWrite, okEcho)
	cases := map[string]string{
		"absent":            ``,
		"null":              `null`,
		"array":             `[]`,
		"string":            `"x"`,
		"number":            `1`,
		"whitespace":        `  `,
		"schema: pattern":   `{"text":"HI"}`,
		"schema: required":  `{}`,
		"schema: type":      `{"text":5}`,
		"unknown member":    `{"text":"hi","extra":1}`,
		"case variant":      `{"TEXT":"hi"}`,
		"case variant 2":    `{"Text":"hi"}`,
		"duplicate":         `{"text":"hi","text":"ho"}`,
		"duplicate escaped": `{"te\u0078t":"hi","text":"ho"}`,
		"trailing object":   `{"text":"hi"} {}`,
		"trailing garbage":  `{"text":"hi"}x`,
		"trailing comma":    `{"text":"hi",}`,
		"invalid utf8":      "{\"text\":\"h\xffi\"}",
		"fraction for int":  `{"text":"hi","count":1.5}`,
		"1.0 for int":       `{"text":"hi","count":1.0}`,
		"exponent for int":  `{"text":"hi","count":1e2}`,
		"huge int":          `{"text":"hi","count":99999999999999999999}`,
		"exponent overflow": `{"text":"hi","count":1e400}`,
		"int8 overflow":     `{"text":"hi","small":300}`,
		"string for int":    `{"text":"hi","count":"5"}`,
		"null required":     `{"text":null}`,
		"deep nesting":      `{"text":"hi","x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
	}
	for name, args := range cases {
		r := f.exec.Execute(context.Background(), runtime.ExecutionContext{AllowSideEffects: true}, call(args))
		if r.Code() != runtime.CodeInvalidArguments {
			t.Errorf("%s: code %q, want invalid_arguments", name, r.Code())
			continue
		}
		if r.ToolVersion == nil || *r.ToolVersion != "2.1" {
			t.Errorf("%s: tool_version %v", name, r.ToolVersion)
		}
		if strings.Contains(r.Error.Message, "text") || strings.Contains(r.Error.Message, "pattern") {
			t.Errorf("%s: message names a field or keyword: %q", name, r.Error.Message)
		}
	}
	if n := f.policyCalls.Load(); n != 0 {
		t.Errorf("policy saw %d invalid calls; validation must come first", n)
	}
	if n := f.handlerCalls.Load(); n != 0 {
		t.Errorf("handler ran %d times on invalid arguments", n)
	}
	if !strings.Contains(f.log.String(), `"call_id":"c1"`) {
		t.Errorf("validation detail not logged with call_id:\n%s", f.log.String())
	}
}

func TestArgumentSizeLimit(t *testing.T) {
	f := newFixture(t, runtime.EffectRead, okEcho, runtime.WithLimits(runtime.Limits{MaxArgumentBytes: 64}))
	big := `{"text":"` + strings.Repeat("a", 100) + `"}`
	if r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(big)); r.Code() != runtime.CodeInvalidArguments {
		t.Fatalf("oversize arguments: %s", marshal(t, r))
	}
	if r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"ok"}`)); !r.OK {
		t.Fatalf("small arguments: %s", marshal(t, r))
	}
}

func TestDefaultPolicyGatesWrites(t *testing.T) {
	f := newFixture(t, runtime.EffectWrite, okEcho)
	r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`))
	if r.Code() != runtime.CodeApprovalRequired || f.handlerCalls.Load() != 0 {
		t.Fatalf("write without approval: %s, handler calls %d", marshal(t, r), f.handlerCalls.Load())
	}
	r = f.exec.Execute(context.Background(), runtime.ExecutionContext{AllowSideEffects: true}, call(`{"text":"hi"}`))
	if !r.OK || f.handlerCalls.Load() != 1 {
		t.Fatalf("write with AllowSideEffects: %s", marshal(t, r))
	}
}

func TestPolicyIsReplaceable(t *testing.T) {
	var seen runtime.PolicyRequest
	deny := runtime.PolicyFunc(func(_ context.Context, req runtime.PolicyRequest) runtime.Decision {
		seen = req
		return runtime.Decision{Reason: "tenant t9 may not echo"}
	})
	f := newFixture(t, runtime.EffectRead, okEcho, runtime.WithPolicy(deny))
	r := f.exec.Execute(context.Background(), runtime.ExecutionContext{Tenant: "t9"}, call(`{"text":"hi"}`))
	if r.Code() != runtime.CodeApprovalRequired || f.handlerCalls.Load() != 0 {
		t.Fatalf("custom deny: %s", marshal(t, r))
	}
	if seen.Tool.Name != "echo" || seen.Context.Tenant != "t9" || string(seen.Arguments) != `{"text":"hi"}` || seen.CallID != "c1" {
		t.Fatalf("policy request = %+v", seen)
	}
	if strings.Contains(r.Error.Message, "t9") {
		t.Fatalf("policy reason leaked: %q", r.Error.Message)
	}
	if !strings.Contains(f.log.String(), "tenant t9 may not echo") {
		t.Fatalf("policy reason not logged:\n%s", f.log.String())
	}
}

func TestBusinessErrorKeepsCode(t *testing.T) {
	f := newFixture(t, runtime.EffectRead, func(context.Context, echoArgs) (echoResult, error) {
		return echoResult{}, fmt.Errorf("wrapped: %w", runtime.Fail("text_not_found", "No such text."))
	})
	r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`))
	if got := marshal(t, r); got != `{"call_id":"c1","tool_name":"echo","tool_version":"2.1","ok":false,"data":null,"error":{"code":"text_not_found","message":"No such text."}}` {
		t.Fatalf("business error: %s", got)
	}
}

func TestBadBusinessCodesBecomeInternal(t *testing.T) {
	for _, code := range []runtime.Code{"undeclared_code", runtime.CodeUnknownTool, runtime.CodeApprovalRequired, runtime.CodeToolTimeout, "Not-Snake", "", "a b"} {
		f := newFixture(t, runtime.EffectRead, func(context.Context, echoArgs) (echoResult, error) {
			return echoResult{}, runtime.Fail(code, "borrowed code")
		})
		r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`))
		if r.Code() != runtime.CodeToolInternalError || strings.Contains(r.Error.Message, "borrowed") {
			t.Errorf("code %q: %s", code, marshal(t, r))
		}
	}
}

func TestInternalErrorDetailStaysInTheLog(t *testing.T) {
	const secret = "open /srv/keel/secrets/db.go:12: password=hunter2 (*errors.errorString)"
	f := newFixture(t, runtime.EffectRead, func(context.Context, echoArgs) (echoResult, error) {
		return echoResult{}, errors.New(secret)
	})
	r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`))
	out := marshal(t, r)
	if r.Code() != runtime.CodeToolInternalError {
		t.Fatalf("got %s", out)
	}
	for _, leak := range []string{"hunter2", "/srv", ".go:", "errors.", "password"} {
		if strings.Contains(out, leak) {
			t.Errorf("result leaks %q: %s", leak, out)
		}
	}
	logged := f.log.String()
	for _, want := range []string{"hunter2", `"call_id":"c1"`, `"tool":"echo"`} {
		if !strings.Contains(logged, want) {
			t.Errorf("protected log lacks %q:\n%s", want, logged)
		}
	}
}

func TestPanicBecomesInternalError(t *testing.T) {
	f := newFixture(t, runtime.EffectRead, func(context.Context, echoArgs) (echoResult, error) {
		var m map[string]int
		m["boom"]++ // nil map write
		return echoResult{}, nil
	})
	r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`))
	out := marshal(t, r)
	if r.Code() != runtime.CodeToolInternalError || strings.Contains(out, "panic") || strings.Contains(out, "goroutine") {
		t.Fatalf("panic result: %s", out)
	}
	if !strings.Contains(f.log.String(), "goroutine") || !strings.Contains(f.log.String(), "nil map") {
		t.Fatalf("panic stack not in the protected log:\n%s", f.log.String())
	}
	// The executor still works after a panic.
	if r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`)); r.Code() != runtime.CodeToolInternalError {
		t.Fatalf("second call: %s", marshal(t, r))
	}
}

func TestOutputIsValidated(t *testing.T) {
	cases := map[string]echoResult{
		"enum outside set": {Text: "hi", Tags: []string{}, Level: "urgent"},
		"NaN":              {Text: "hi", Tags: []string{}, Level: "low", Score: math.NaN()},
		"+Inf":             {Text: "hi", Tags: []string{}, Level: "low", Score: math.Inf(1)},
		"invalid UTF-8":    {Text: "h\xffi", Tags: []string{}, Level: "low"},
	}
	for name, res := range cases {
		f := newFixture(t, runtime.EffectRead, func(context.Context, echoArgs) (echoResult, error) { return res, nil })
		r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`))
		if r.Code() != runtime.CodeInvalidToolOutput || r.Data != nil || f.handlerCalls.Load() != 1 {
			t.Errorf("%s: %s", name, marshal(t, r))
		}
	}
}

// A hand-bound handler's nil slice is written as [] (json v2's default, as
// generated writers do), so the required array is there.
func TestHandBoundNilSliceIsAnEmptyArray(t *testing.T) {
	f := newFixture(t, runtime.EffectRead, func(context.Context, echoArgs) (echoResult, error) {
		return echoResult{Text: "hi", Tags: nil, Level: "low"}, nil
	})
	r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`))
	if want := `{"text":"hi","tags":[],"level":"low","score":0}`; !r.OK || string(r.Data) != want {
		t.Fatalf("nil tags: %s, want data %s", marshal(t, r), want)
	}
}

func TestHandlerSeesExecutionContextAndExactArguments(t *testing.T) {
	var got runtime.ExecutionContext
	var args echoArgs
	f := newFixture(t, runtime.EffectRead, func(ctx context.Context, a echoArgs) (echoResult, error) {
		got, _ = runtime.ExecutionContextFrom(ctx)
		args = a
		return okEcho(ctx, a)
	})
	ec := runtime.ExecutionContext{Principal: "alice", Tenant: "acme"}
	f.exec.Execute(context.Background(), ec, call(`{"text":"hi","count":9007199254740993}`))
	if !reflect.DeepEqual(got, ec) {
		t.Errorf("execution context = %+v", got)
	}
	if args.Count != 9007199254740993 { // 2^53+1: no float rounding on the way
		t.Errorf("count = %d", args.Count)
	}
}

func TestNewExecutorRejectsBrokenSchema(t *testing.T) {
	tool := runtime.NewTool(runtime.ToolInfo{Name: "bad", InputSchema: json.RawMessage(`{"type":"object","$ref":"file:///etc/passwd"}`), OutputSchema: json.RawMessage(echoOut)},
		runtime.Handle(okEcho))
	if _, err := runtime.NewExecutor(keeltest.Of(tool)); err == nil {
		t.Fatal("a schema with a $ref to a file compiled; the loader must load nothing")
	}
	tool = runtime.NewTool(runtime.ToolInfo{Name: "bad", InputSchema: json.RawMessage(`{"type":`), OutputSchema: json.RawMessage(echoOut)},
		runtime.Handle(okEcho))
	if _, err := runtime.NewExecutor(keeltest.Of(tool)); err == nil {
		t.Fatal("malformed schema accepted")
	}
}

func TestUndeclaredCodeIsLogged(t *testing.T) {
	f := newFixture(t, runtime.EffectRead, func(context.Context, echoArgs) (echoResult, error) {
		return echoResult{}, runtime.Fail("quota_exceeded", "Try tomorrow.")
	})
	r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`))
	if r.Code() != runtime.CodeToolInternalError || !strings.Contains(f.log.String(), "quota_exceeded") {
		t.Fatalf("undeclared code: %s\nlog: %s", marshal(t, r), f.log.String())
	}
}

func TestNilPointerResultIsInvalidOutput(t *testing.T) {
	tool := runtime.NewTool(runtime.ToolInfo{Name: "ptr", Version: "1", Effect: runtime.EffectRead, Description: "d",
		InputSchema: json.RawMessage(echoIn), OutputSchema: json.RawMessage(echoOut)},
		runtime.Handle(func(context.Context, echoArgs) (*echoResult, error) { return nil, nil }))
	exec := executorFor(t, tool)
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "p", Name: "ptr", Arguments: json.RawMessage(`{"text":"hi"}`)})
	if r.Code() != runtime.CodeInvalidToolOutput {
		t.Fatalf("nil, nil: %s", marshal(t, r))
	}
}

func TestOutputSizeCap(t *testing.T) {
	big := func(context.Context, echoArgs) (echoResult, error) {
		return echoResult{Text: strings.Repeat("a", 2000), Tags: []string{}, Level: "low"}, nil
	}
	f := newFixture(t, runtime.EffectRead, big, runtime.WithLimits(runtime.Limits{MaxOutputBytes: 1000}))
	if r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`)); r.Code() != runtime.CodeInvalidToolOutput {
		t.Fatalf("oversize output: %s", marshal(t, r))
	}
	f = newFixture(t, runtime.EffectRead, big)
	if r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`)); !r.OK {
		t.Fatalf("output under the default cap: %s", marshal(t, r))
	}
}

func TestHandlerIgnoringItsContextTimesOut(t *testing.T) {
	t.Parallel() // waits on timers
	release := make(chan struct{})
	defer close(release)
	f := newFixture(t, runtime.EffectRead, func(context.Context, echoArgs) (echoResult, error) {
		<-release // ignores ctx entirely
		return echoResult{}, nil
	})
	start := time.Now()
	r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`))
	if r.Code() != runtime.CodeToolTimeout || r.Error.Message != "The tool did not finish in time." {
		t.Fatalf("got %s", marshal(t, r))
	}
	// Not a timing assertion: the call must have returned while the handler
	// was still blocked, which only the deadline can explain.
	if elapsed := time.Since(start); elapsed < echoTimeout {
		t.Fatalf("returned after %v, before the declared timeout %v", elapsed, echoTimeout)
	}
}

func TestHandlerHonouringItsContextTimesOut(t *testing.T) {
	t.Parallel() // waits on timers
	f := newFixture(t, runtime.EffectRead, func(ctx context.Context, _ echoArgs) (echoResult, error) {
		<-ctx.Done()
		return echoResult{}, fmt.Errorf("query aborted: %w", ctx.Err())
	})
	if r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"hi"}`)); r.Code() != runtime.CodeToolTimeout {
		t.Fatalf("got %s", marshal(t, r))
	}
}

func TestExecutorDefaultTimeout(t *testing.T) {
	tool := runtime.NewTool(runtime.ToolInfo{Name: "slow", Version: "1", Effect: runtime.EffectRead, Description: "d",
		InputSchema: json.RawMessage(echoIn), OutputSchema: json.RawMessage(echoOut)}, // no Timeout: the executor's applies
		runtime.Handle(func(ctx context.Context, _ echoArgs) (echoResult, error) {
			<-ctx.Done()
			return echoResult{}, ctx.Err()
		}))
	exec := executorFor(t, tool, runtime.WithDefaultTimeout(50*time.Millisecond))
	r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "s", Name: "slow", Arguments: json.RawMessage(`{"text":"hi"}`)})
	if r.Code() != runtime.CodeToolTimeout {
		t.Fatalf("got %s", marshal(t, r))
	}
}

func TestCancelledCallerRunsNothing(t *testing.T) {
	f := newFixture(t, runtime.EffectRead, okEcho)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := f.exec.Execute(ctx, runtime.ExecutionContext{}, call(`{"text":"hi"}`))
	if r.Code() != runtime.CodeToolCancelled || f.handlerCalls.Load() != 0 {
		t.Fatalf("cancelled caller: %s, handler calls %d", marshal(t, r), f.handlerCalls.Load())
	}
}

// A caller that goes away during the handler is tool_cancelled, not
// tool_timeout, and the handler's context ends with it; a handler that
// ignores it is still answered for at once.
func TestCallerCancelsDuringHandler(t *testing.T) {
	for _, honours := range []bool{true, false} {
		started := make(chan struct{})
		release := make(chan struct{})
		sawEnd := make(chan bool, 1)
		f := newFixture(t, runtime.EffectRead, func(ctx context.Context, _ echoArgs) (echoResult, error) {
			close(started)
			if honours {
				<-ctx.Done()
				sawEnd <- true
				return echoResult{}, ctx.Err()
			}
			<-release
			return echoResult{}, nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		if r := f.exec.Execute(ctx, runtime.ExecutionContext{}, call(`{"text":"hi"}`)); r.Code() != runtime.CodeToolCancelled {
			t.Fatalf("honours=%v: got %s", honours, marshal(t, r))
		}
		if honours && !<-sawEnd {
			t.Fatal("the handler's context did not end")
		}
		close(release)
	}
}

// With WithErrorDetails, each detail says where and which keyword, and
// what the public schema says there for the model to repair its call: the
// pattern, the type, the members allowed beside the ones sent that it
// does not declare (their names bounded, at most 8). No value of the call
// is echoed.
func TestErrorDetails(t *testing.T) {
	f := newFixture(t, runtime.EffectRead, okEcho, runtime.WithErrorDetails())
	allowed := `"allowed":["count","small","text"]`
	long := strings.Repeat("é", 40) // 80 bytes: cut at 64, on a character
	var many []string
	for i := range 10 {
		many = append(many, fmt.Sprintf(`"m%d":1`, i))
	}
	cases := map[string]string{
		`{"text":"HI"}`: `[{"pointer":"/text","keyword":"pattern","schema":"^[a-z]+$"}]`,
		`{}`:            `[{"pointer":"/text","keyword":"required"}]`,
		`{"text":"hi","secret_key":"SECRETVALUE"}`:      `[{"pointer":"","keyword":"additionalProperties","unknown":["secret_key"],` + allowed + `}]`,
		`{"text":"hi","` + long + `":"SECRETVALUE"}`:    `[{"pointer":"","keyword":"additionalProperties","unknown":["` + strings.Repeat("é", 32) + `"],` + allowed + `}]`,
		`{"text":"hi",` + strings.Join(many, ",") + `}`: `[{"pointer":"","keyword":"additionalProperties","unknown":["m0","m1","m2","m3","m4","m5","m6","m7"],` + allowed + `}]`,
		`{"text":5}`:                `[{"pointer":"/text","keyword":"type","schema":"string"}]`,
		`{"text":"hi","count":1.5}`: `[{"pointer":"/count","keyword":"type","schema":"integer"}]`,
		`{"text":"hi","small":300}`: `[{"pointer":"/small","keyword":"type","schema":"integer"}]`,
		`[]`:                        `[{"pointer":"","keyword":"type","schema":"object"}]`,
		`{"text":"hi","text":"ho"}`: `[{"pointer":"","keyword":"json"}]`,
		`{"text":"hi"} x`:           `[{"pointer":"","keyword":"json"}]`,
		`{"x":` + strings.Repeat("[", 80) + strings.Repeat("]", 80) + `}`: `[{"pointer":"","keyword":"maxDepth"}]`,
	}
	for args, want := range cases {
		r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(args))
		got, _ := json.Marshal(r.Error.Details)
		if r.Code() != runtime.CodeInvalidArguments || string(got) != want {
			t.Errorf("%.40s: details %s, want %s", args, got, want)
		}
		if strings.Contains(marshal(t, r), "SECRETVALUE") || strings.Contains(marshal(t, r), "HI") {
			t.Errorf("%.40s: details echo a value of the call: %s", args, marshal(t, r))
		}
	}
	// Off by default: the error object has exactly code and message.
	plain := newFixture(t, runtime.EffectRead, okEcho)
	r := plain.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"HI"}`))
	if got := marshal(t, r); !strings.HasSuffix(got, `"error":{"code":"invalid_arguments","message":"The arguments do not match the tool's input schema."}}`) {
		t.Fatalf("details without the option: %s", got)
	}
}

// Integers beyond 2^53 are compared exactly against the schema.
func TestBigIntegersAreExact(t *testing.T) {
	in := `{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740992}},"required":["n"],"additionalProperties":false}`
	type nArgs struct {
		N int64 `json:"n"`
	}
	tool := runtime.NewTool(runtime.ToolInfo{Name: "n", Version: "1", Effect: runtime.EffectRead, Description: "d",
		InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(echoOut)},
		runtime.Handle(func(_ context.Context, a nArgs) (echoResult, error) {
			return echoResult{Text: "ok", Tags: []string{}, Level: "low"}, nil
		}))
	exec := executorFor(t, tool)
	for args, want := range map[string]runtime.Code{
		`{"n":9007199254740992}`: "",
		`{"n":9007199254740993}`: runtime.CodeInvalidArguments, // equal to the maximum as a float64
	} {
		r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "n", Name: "n", Arguments: json.RawMessage(args)})
		if r.Code() != want {
			t.Errorf("%s: code %q, want %q", args, r.Code(), want)
		}
	}
}

// executorFor makes an executor for one hand-built tool, logging nowhere.
func executorFor(t *testing.T, tool *runtime.Tool, opts ...runtime.Option) *runtime.Executor {
	t.Helper()
	opts = append([]runtime.Option{runtime.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	exec, err := runtime.NewExecutor(keeltest.Of(tool), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

// A tool that declares scopes runs only for a caller whose credentials grant
// all of them: otherwise insufficient_scope, naming the missing ones, before
// the arguments are read, the policy asked or the handler run; audited.
func TestScopesAreCheckedFirst(t *testing.T) {
	var ran atomic.Int32
	tool := runtime.NewTool(runtime.ToolInfo{Name: "scale", Version: "1", Effect: runtime.EffectRead, Description: "Scales.",
		Scopes:      []string{"deploy:read", "ops:write"},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, struct {
			N int `json:"n"`
		}) (struct{}, error) {
			ran.Add(1)
			return struct{}{}, nil
		}))
	var audit bytes.Buffer
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithObserver(runtime.AuditLog(slog.New(slog.NewJSONHandler(&audit, nil)))))
	if err != nil {
		t.Fatal(err)
	}
	call := runtime.ToolCall{ID: "s", Name: "scale", Arguments: json.RawMessage(`not even JSON`)}
	r := exec.Execute(context.Background(), runtime.ExecutionContext{Principal: "bo", Scopes: []string{"ops:write"}}, call)
	if r.Code() != runtime.CodeInsufficientScope || r.Error.Message != "The caller's credentials lack a scope this tool needs: deploy:read." || ran.Load() != 0 {
		t.Fatalf("without deploy:read: %+v (handler ran %d)", r.Error, ran.Load())
	}
	if !strings.Contains(audit.String(), `"code":"insufficient_scope"`) {
		t.Errorf("audit: %s", audit.String())
	}
	call.Arguments = json.RawMessage(`{"n":3}`)
	if r := exec.Execute(context.Background(), runtime.ExecutionContext{Scopes: []string{"ops:write", "deploy:read", "extra"}}, call); !r.OK || ran.Load() != 1 {
		t.Fatalf("with both scopes: %+v", r.Error)
	}
}
