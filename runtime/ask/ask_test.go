package ask_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/ask"
	"github.com/keelgen/keel/runtime/keeltest"
)

// account is a form: which of the caller's accounts it meant.
type account struct {
	ID      string `json:"id"`
	Confirm bool   `json:"confirm"`
}

func (*account) ElicitSchema() []byte {
	return []byte(`{"type":"object","properties":{"id":{"type":"string","enum":["acc-1","acc-2"]},"confirm":{"type":"boolean"}},"required":["id"]}`)
}

func (a *account) ReadElicit(content []byte) error { return ask.Decode(a.ElicitSchema(), content, a) }

// transfer asks which account, and the client's model for a memo, before it
// does anything; it counts its runs to the end.
func transfer(done *int) *runtime.Tool {
	return runtime.NewTool(runtime.ToolInfo{Name: "transfer", Version: "1", Effect: runtime.EffectRead, Description: "d",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(ctx context.Context, _ struct{}) (map[string]string, error) {
			acc, err1 := ask.Elicit[account](ctx, "account", "Which account?")
			memo, err2 := ask.Sample(ctx, "memo", []ask.Message{{Role: "user", Text: "A memo for a transfer"}}, 50)
			if err := errors.Join(err1, err2); err != nil {
				return nil, err
			}
			*done++
			return map[string]string{"account": acc.ID, "memo": memo.Text}, nil
		}))
}

// A handler's questions: the first round is input_required with both
// requests, keyed; an answer to one asks only the other; with both, the
// call completes, once, with the answers read into their types. An answer
// that does not read is asked for again; one declined ends the call with
// the handler's error; a client that cannot answer a kind is
// input_unavailable.
func TestAHandlerAsksAndRunsAgainWithTheAnswers(t *testing.T) {
	var done int
	e, err := runtime.NewExecutor(keeltest.Of(transfer(&done)), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	call := func(accepts ask.Kinds, answers map[string]string) runtime.ToolResult {
		c := runtime.ToolCall{ID: "t", Name: "transfer", Accepts: accepts, Answers: map[string]json.RawMessage{}}
		for k, v := range answers {
			c.Answers[k] = json.RawMessage(v)
		}
		return e.Execute(context.Background(), runtime.ExecutionContext{}, c)
	}
	both := ask.Elicitation | ask.Sampling
	r := call(both, nil)
	if r.Code() != runtime.CodeInputRequired || len(r.Error.Input) != 2 || r.Error.Input["account"].Method != ask.MethodElicit ||
		r.Error.Input["memo"].Method != ask.MethodSample || !strings.Contains(string(r.Error.Input["account"].Params), `"Which account?"`) {
		t.Fatalf("the first round: %+v", r.Error)
	}
	accepted := `{"action":"accept","content":{"id":"acc-2"}}`
	memo := `{"role":"assistant","content":{"type":"text","text":"rent"},"model":"m"}`
	if r := call(both, map[string]string{"account": accepted}); r.Code() != runtime.CodeInputRequired || len(r.Error.Input) != 1 || r.Error.Input["memo"].Method == "" {
		t.Fatalf("one answered: %+v", r.Error)
	}
	r = call(both, map[string]string{"account": accepted, "memo": memo})
	if !r.OK || done != 1 || string(r.Data) != `{"account":"acc-2","memo":"rent"}` {
		t.Fatalf("both answered: ran %d, %s %+v", done, r.Data, r.Error)
	}
	for name, bad := range map[string]string{
		"not a choice":      `{"action":"accept","content":{"id":"acc-9"}}`,
		"an unknown member": `{"action":"accept","content":{"id":"acc-1","admin":true}}`,
		"a member twice":    `{"action":"accept","content":{"id":"acc-1","id":"acc-2"}}`,
		"no action":         `{"content":{"id":"acc-1"}}`,
		"a wrong type":      `{"action":"accept","content":{"id":"acc-1","confirm":"yes"}}`,
	} {
		if r := call(both, map[string]string{"account": bad, "memo": memo}); r.Code() != runtime.CodeInputRequired || r.Error.Input["account"].Method == "" || done != 1 {
			t.Errorf("%s: ran %d, %+v", name, done, r.Error)
		}
	}
	if r := call(both, map[string]string{"account": `{"action":"decline"}`, "memo": memo}); r.Code() != runtime.CodeToolInternalError || done != 1 {
		t.Errorf("declined: %+v", r.Error)
	}
	if r := call(ask.Elicitation, nil); r.Code() != runtime.CodeInputUnavailable || len(r.Error.Input) != 1 || r.Error.Input["memo"].Method != ask.MethodSample {
		t.Errorf("a client without sampling: %+v", r.Error)
	}
}
