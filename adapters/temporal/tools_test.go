package keeltemporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/keeltest"
	"github.com/keelgen/keel/runtime/report"
)

// The tools the tests run: a read with a business error, a long write that
// reports progress and makes its effect once per idempotency key, a read
// that fails on its first try, one that always fails, one that waits for
// its context, one whose result is large, one that needs a scope, and one
// that asks two questions, one after the other.

type lookupArgs struct {
	ID string `json:"id"`
}

type lookupResult struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

type rolloutArgs struct {
	Service string `json:"service"`
	Steps   int    `json:"steps"`
	StepMS  int    `json:"step_ms"`
}

type rolloutResult struct {
	Service string `json:"service"`
	Key     string `json:"key"`
}

type emptyArgs struct{}

type textResult struct {
	Text string `json:"text"`
}

const (
	lookupIn   = `{"type":"object","properties":{"id":{"type":"string","minLength":1}},"required":["id"],"additionalProperties":false}`
	lookupOut  = `{"type":"object","properties":{"id":{"type":"string"},"status":{"type":"string"}},"required":["id","status"],"additionalProperties":false}`
	rolloutIn  = `{"type":"object","properties":{"service":{"type":"string","minLength":1},"steps":{"type":"integer","minimum":1,"maximum":100},"step_ms":{"type":"integer","minimum":0,"maximum":2000}},"required":["service","steps","step_ms"],"additionalProperties":false}`
	rolloutOut = `{"type":"object","properties":{"service":{"type":"string"},"key":{"type":"string"}},"required":["service","key"],"additionalProperties":false}`
	emptyIn    = `{"type":"object","properties":{},"additionalProperties":false}`
	textOut    = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`
)

// ledger is the world the rollout changes, in a folder every worker process
// shares: one file per effect, named by the call's idempotency key, and a
// line per try that began.
type ledger string

func (l ledger) tried(ctx context.Context) {
	ec, _ := runtime.ExecutionContextFrom(ctx)
	f, err := os.OpenFile(filepath.Join(string(l), "tries"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	n := 0
	if ec.Attempt != nil {
		n = ec.Attempt.Number
	}
	fmt.Fprintf(f, "%d %d\n", os.Getpid(), n)
}

// effect makes the rollout's change once per key: a retry finds it made.
func (l ledger) effect(key, service string) error {
	f, err := os.OpenFile(filepath.Join(string(l), "effect-"+key), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(service)
	return errors.Join(err, f.Close())
}

func (l ledger) effects() []string {
	m, _ := filepath.Glob(filepath.Join(string(l), "effect-*"))
	return m
}

func (l ledger) tries() []string {
	b, _ := os.ReadFile(filepath.Join(string(l), "tries"))
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// stalled is told when the stall tool's context ends.
type stalled chan error

func testTools(l ledger, stall stalled) (keeltest.Set, error) {
	tool := func(name string, effect runtime.Effect, in, out string, errs []runtime.Code, scopes []string, h runtime.Handler) *runtime.Tool {
		return runtime.NewTool(runtime.ToolInfo{Name: name, Version: "1.0", Effect: effect, Description: name,
			InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(out), Errors: errs, Scopes: scopes, Timeout: 30 * time.Second}, h)
	}
	return keeltest.Locked(
		tool("lookup", runtime.EffectRead, lookupIn, lookupOut, []runtime.Code{"not_found"}, nil,
			runtime.Handle(func(_ context.Context, a lookupArgs) (lookupResult, error) {
				if a.ID == "missing" {
					return lookupResult{}, runtime.Fail("not_found", "No such id.")
				}
				return lookupResult{ID: a.ID, Status: "open"}, nil
			})),
		tool("secret", runtime.EffectRead, emptyIn, textOut, nil, []string{"secrets:read"},
			runtime.Handle(func(context.Context, emptyArgs) (textResult, error) { return textResult{Text: "s"}, nil })),
		tool("rollout", runtime.EffectWrite, rolloutIn, rolloutOut, nil, nil,
			runtime.Handle(func(ctx context.Context, a rolloutArgs) (rolloutResult, error) {
				l.tried(ctx)
				for i := range a.Steps {
					report.Progress(ctx, float64(i), float64(a.Steps), "step "+fmt.Sprint(i+1))
					select {
					case <-ctx.Done():
						return rolloutResult{}, ctx.Err()
					case <-time.After(time.Duration(a.StepMS) * time.Millisecond):
					}
				}
				key := runtime.IdempotencyKey(ctx)
				return rolloutResult{Service: a.Service, Key: key}, l.effect(key, a.Service)
			})),
		tool("flaky", runtime.EffectRead, emptyIn, textOut, nil, nil,
			runtime.Handle(func(ctx context.Context, _ emptyArgs) (textResult, error) {
				if ec, _ := runtime.ExecutionContextFrom(ctx); ec.Attempt == nil || ec.Attempt.Number < 2 {
					return textResult{}, errors.New("the first try fails at /srv/flaky.go:12")
				}
				return textResult{Text: "second try"}, nil
			})),
		tool("broken", runtime.EffectRead, emptyIn, textOut, nil, nil,
			runtime.Handle(func(context.Context, emptyArgs) (textResult, error) {
				return textResult{}, errors.New("panic: runtime error at /srv/broken.go:7")
			})),
		tool("stall", runtime.EffectRead, emptyIn, textOut, nil, nil,
			runtime.Handle(func(ctx context.Context, _ emptyArgs) (textResult, error) {
				report.Progress(ctx, 1, 0, "waiting")
				<-ctx.Done()
				if stall != nil {
					stall <- ctx.Err()
				}
				return textResult{}, ctx.Err()
			})),
		tool("pick_seat", runtime.EffectRead, emptyIn, textOut, nil, nil,
			runtime.Handle(func(ctx context.Context, _ emptyArgs) (textResult, error) {
				s, err := ask.Elicit[seatForm](ctx, "seat", "Which seat?")
				if err != nil {
					return textResult{}, err
				}
				sure, err := ask.Elicit[sureForm](ctx, "sure", "Seat "+s.Seat+"?")
				if err != nil {
					return textResult{}, err
				}
				return textResult{Text: fmt.Sprintf("seat %s, sure %v", s.Seat, sure.OK)}, nil
			})),
		tool("big", runtime.EffectRead, emptyIn, textOut, nil, nil,
			runtime.Handle(func(context.Context, emptyArgs) (textResult, error) {
				return textResult{Text: strings.Repeat("x", 4096)}, nil
			})),
	)
}

// seatForm and sureForm are pick_seat's two questions, their forms
// written by hand (keelgen generates them for a package it reads).
type seatForm struct {
	Seat string `json:"seat"`
}

func (*seatForm) ElicitSchema() []byte {
	return []byte(`{"type":"object","properties":{"seat":{"type":"string","maxLength":4}},"required":["seat"]}`)
}

func (f *seatForm) ReadElicit(content []byte) error { return ask.Decode(f.ElicitSchema(), content, f) }

type sureForm struct {
	OK bool `json:"ok"`
}

func (*sureForm) ElicitSchema() []byte {
	return []byte(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)
}

func (f *sureForm) ReadElicit(content []byte) error { return ask.Decode(f.ElicitSchema(), content, f) }
