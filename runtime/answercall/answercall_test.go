package answercall_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/keelgen/keel/internal/testing/mcpsuite"
	"github.com/keelgen/keel/internal/testing/mcpsuite/generated"
	"github.com/keelgen/keel/provider/anthropic"
	"github.com/keelgen/keel/provider/bedrock"
	"github.com/keelgen/keel/provider/gemini"
	"github.com/keelgen/keel/provider/ollama"
	"github.com/keelgen/keel/provider/openai"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/answercall"
	"github.com/keelgen/keel/runtime/ask"
)

// door is one provider's way in and out: its own call shape to a keel
// call, and a result back to the text its model reads.
type door struct {
	name string
	call func(id, name string, args json.RawMessage) runtime.ToolCall
	text func(t *testing.T, r runtime.ToolResult) string
}

func doors(tools []runtime.ModelTool) []door {
	marshal := func(t *testing.T, v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	oa := openai.New(tools, openai.Options{})
	return []door{
		{"anthropic", func(id, name string, args json.RawMessage) runtime.ToolCall {
			return anthropic.Call(anthropic.ToolUse{Type: "tool_use", ID: id, Name: name, Input: args})
		}, func(t *testing.T, r runtime.ToolResult) string { return marshal(t, anthropic.Result(r)) }},
		{"openai", func(id, name string, args json.RawMessage) runtime.ToolCall { return oa.Call(id, name, string(args)) },
			func(t *testing.T, r runtime.ToolResult) string { return marshal(t, openai.ChatResult(r)) }},
		{"gemini", func(id, name string, args json.RawMessage) runtime.ToolCall {
			return gemini.Call(gemini.FunctionCall{ID: id, Name: name, Args: args}, "fallback")
		}, func(t *testing.T, r runtime.ToolResult) string { return marshal(t, gemini.Result(r)) }},
		{"ollama", func(id, name string, args json.RawMessage) runtime.ToolCall {
			c := ollama.ToolCall{ID: id}
			c.Function.Name, c.Function.Arguments = name, args
			return ollama.Call(c, "fallback")
		}, func(t *testing.T, r runtime.ToolResult) string { return marshal(t, ollama.Result(r)) }},
		{"bedrock", func(id, name string, args json.RawMessage) runtime.ToolCall {
			var v map[string]any
			_ = json.Unmarshal(args, &v)
			return bedrock.Call(types.ToolUseBlock{ToolUseId: aws.String(id), Name: aws.String(name), Input: document.NewLazyDocument(v)})
		}, func(t *testing.T, r runtime.ToolResult) string {
			block, err := bedrock.Result(r, bedrock.Options{})
			if err != nil {
				t.Fatal(err)
			}
			text, _ := block.(*types.ContentBlockMemberToolResult).Value.Content[0].(*types.ToolResultContentBlockMemberJson).Value.MarshalSmithyDocument()
			return string(text)
		}},
	}
}

// Through each provider's door, a handler that asks two forms in two
// rounds (keelgen generated both forms) gets each answer checked: an
// answer that does not read is asked again, and the call completes once,
// with the answers the person gave.
func TestEachProviderDoorAnswersAGeneratedForm(t *testing.T) {
	exec, err := generated.NewExecutor()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range doors(runtime.ModelTools(generated.ToolSet())) {
		t.Run(d.name, func(t *testing.T) {
			asked := map[string]int{}
			var questions []string
			answer := func(ctx context.Context, key string, r ask.Request) (json.RawMessage, error) {
				asked[key]++
				f, ok := r.Form()
				if !ok {
					t.Fatalf("%s: not a form: %+v", key, r)
				}
				questions = append(questions, f.Message)
				switch {
				case key == "step1" && asked[key] == 1:
					return ask.AcceptForm(map[string]any{"nom": "Ada"}) // no member "name": asked again
				case key == "step1":
					return ask.AcceptForm(mcpsuite.Name{Name: "Ada"})
				case key == "step2":
					if !strings.Contains(string(f.Schema), `"color"`) {
						t.Errorf("step2's form is %s", f.Schema)
					}
					return ask.AcceptForm(mcpsuite.Color{Color: "teal"})
				}
				return nil, errors.New("unexpected " + key)
			}
			call := d.call("call-1", generated.ToolTestInputRequiredResultMultiRound, json.RawMessage(`{}`))
			r := answercall.Run(context.Background(), exec, runtime.ExecutionContext{}, call, ask.Elicitation, answer)
			if !r.OK {
				t.Fatalf("the call did not complete: %+v", r.Error)
			}
			if text := d.text(t, r); !strings.Contains(text, "Ada likes teal.") {
				t.Errorf("the model reads %s", text)
			}
			if asked["step1"] != 2 || asked["step2"] != 1 {
				t.Errorf("asked %v; want step1 twice (its first answer did not read), step2 once", asked)
			}
			if questions[0] != "Step 1: What is your name?" {
				t.Errorf("the first question is %q", questions[0])
			}
		})
	}
}

// Each way a harness's answer can end a call: declined, an Answerer's
// error, a harness that answers no kind of request, and a handler that
// asks in every round.
func TestRunEndsWithTheHandlersOutcome(t *testing.T) {
	exec, err := generated.NewExecutor()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := runtime.ToolCall{ID: "c", Name: generated.ToolTestElicitation, Arguments: json.RawMessage(`{"message":"Who are you?"}`)}
	declined := answercall.Run(ctx, exec, runtime.ExecutionContext{}, call, ask.Elicitation,
		func(context.Context, string, ask.Request) (json.RawMessage, error) { return ask.DeclineForm(), nil })
	if !declined.OK || !strings.Contains(string(declined.Data), "decline") {
		t.Errorf("declined: %+v %s", declined.Error, declined.Data)
	}
	failed := answercall.Run(ctx, exec, runtime.ExecutionContext{}, call, ask.Elicitation,
		func(context.Context, string, ask.Request) (json.RawMessage, error) {
			return nil, errors.New("no one there")
		})
	if failed.Code() != runtime.CodeInputRequired || failed.Error.Input["contact"].Method != ask.MethodElicit {
		t.Errorf("an Answerer's error: %+v", failed.Error)
	}
	unable := answercall.Run(ctx, exec, runtime.ExecutionContext{}, call, 0, nil)
	if unable.Code() != runtime.CodeInputUnavailable {
		t.Errorf("no kinds: %+v", unable.Error)
	}
	rounds := 0
	never := answercall.Run(ctx, exec, runtime.ExecutionContext{}, call, ask.Elicitation,
		func(context.Context, string, ask.Request) (json.RawMessage, error) {
			rounds++
			return ask.AcceptForm(map[string]any{"username": 7})
		})
	if never.Code() != runtime.CodeInputRequired || rounds != answercall.MaxRounds-1 {
		t.Errorf("an answer that never reads: %q after %d answers; want input_required after %d", never.Code(), rounds, answercall.MaxRounds-1)
	}
}

// The harness reads a sampling request and answers it, and roots.
func TestSamplingAndRootsAnswers(t *testing.T) {
	exec, err := generated.NewExecutor()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	answer := func(_ context.Context, key string, r ask.Request) (json.RawMessage, error) {
		if s, ok := r.Sampling(); ok {
			if len(s.Messages) != 1 || s.Messages[0].Text != "What is the capital of France?" || s.MaxTokens != 100 {
				t.Errorf("sampling request %+v", s)
			}
			return ask.AnswerSampling(ask.Completion{Text: "Paris", Model: "m"}), nil
		}
		return ask.AnswerRoots([]ask.Root{{URI: "file:///src", Name: "src"}}), nil
	}
	s := answercall.Run(ctx, exec, runtime.ExecutionContext{}, runtime.ToolCall{ID: "s", Name: generated.ToolTestInputRequiredResultSampling}, ask.Sampling, answer)
	if !s.OK || !strings.Contains(string(s.Data), "Paris") {
		t.Errorf("sampling: %+v %s", s.Error, s.Data)
	}
	roots := answercall.Run(ctx, exec, runtime.ExecutionContext{}, runtime.ToolCall{ID: "r", Name: generated.ToolTestInputRequiredResultListRoots}, ask.Roots, answer)
	if !roots.OK {
		t.Errorf("roots: %+v", roots.Error)
	}
}
