package mcpsuite

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/keelgen/keel/runtime/ask"
)

// The SEP-2322 scenarios' tools: each asks the client for what it needs
// (package ask) and answers once it has it. keelgen generates each form's
// schema and reader (keel_codecs.go).

// Name is a form with one name.
type Name struct {
	Name string `json:"name"`
}

// Confirmation is a form with one yes or no.
type Confirmation struct {
	OK bool `json:"ok"`
}

// Color is a form with one favorite color.
type Color struct {
	Color string `json:"color"`
}

// Asks the person's name and greets them.
//
//keel:tool name=test_input_required_result_elicitation version=1.0 effect=read
func AskName(ctx context.Context, _ None) (Text, error) {
	n, err := ask.Elicit[Name](ctx, "user_name", "What is your name?")
	if err != nil {
		return Text{}, err
	}
	return Text{Text: "Hello, " + n.Name + "!"}, nil
}

// Asks the person's name, then greets them as a task: the question comes
// before the task exists, its answer reaches the task (SEP-2663's
// composition; the server's Tasks.AskFirst).
//
//keel:tool name=test_tool_with_task version=1.0 effect=read
func AskThenTask(ctx context.Context, _ None) (Text, error) {
	n, err := ask.Elicit[Name](ctx, "user_name", "What is your name?")
	if err != nil {
		return Text{}, err
	}
	return Text{Text: "Hello, " + n.Name + "!"}, nil
}

// Asks the client's model a question and answers with its answer.
//
//keel:tool name=test_input_required_result_sampling version=1.0 effect=read
func AskModel(ctx context.Context, _ None) (Text, error) {
	c, err := ask.Sample(ctx, "capital_question", []ask.Message{{Role: "user", Text: "What is the capital of France?"}}, 100)
	if err != nil {
		return Text{}, err
	}
	return Text{Text: c.Text}, nil
}

// Asks the client's roots and names them.
//
//keel:tool name=test_input_required_result_list_roots version=1.0 effect=read
func AskRoots(ctx context.Context, _ None) (Text, error) {
	roots, err := ask.ListRoots(ctx, "client_roots")
	if err != nil {
		return Text{}, err
	}
	var uris []string
	for _, r := range roots {
		uris = append(uris, r.URI)
	}
	return Text{Text: "Roots: " + strings.Join(uris, ", ")}, nil
}

// Asks for a confirmation, which comes back through the
// signed request state.
//
//keel:tool name=test_input_required_result_request_state version=1.0 effect=read
func AskConfirmation(ctx context.Context, _ None) (Text, error) {
	c, err := ask.Elicit[Confirmation](ctx, "confirm", "Please confirm")
	if err != nil {
		return Text{}, err
	}
	if !c.OK {
		return Text{Text: "state-ok: not confirmed"}, nil
	}
	return Text{Text: "state-ok: confirmed"}, nil
}

// Asks a name, the model's greeting and the roots at once.
//
//keel:tool name=test_input_required_result_multiple_inputs version=1.0 effect=read
func AskThree(ctx context.Context, _ None) (Text, error) {
	n, err1 := ask.Elicit[Name](ctx, "user_name", "What is your name?")
	g, err2 := ask.Sample(ctx, "greeting", []ask.Message{{Role: "user", Text: "Generate a greeting"}}, 50)
	roots, err3 := ask.ListRoots(ctx, "client_roots")
	if err := errors.Join(err1, err2, err3); err != nil {
		return Text{}, err
	}
	return Text{Text: g.Text + ", " + n.Name + " (" + rootCount(roots) + ")"}, nil
}

// Asks a name, then, once it has it, a color.
//
//keel:tool name=test_input_required_result_multi_round version=1.0 effect=read
func AskTwice(ctx context.Context, _ None) (Text, error) {
	n, err := ask.Elicit[Name](ctx, "step1", "Step 1: What is your name?")
	if err != nil {
		return Text{}, err
	}
	c, err := ask.Elicit[Color](ctx, "step2", "Step 2: What is your favorite color?")
	if err != nil {
		return Text{}, err
	}
	return Text{Text: n.Name + " likes " + c.Color + "."}, nil
}

// Asks a confirmation whose request state the client may not
// alter.
//
//keel:tool name=test_input_required_result_tampered_state version=1.0 effect=read
func AskSigned(ctx context.Context, _ None) (Text, error) {
	if _, err := ask.Elicit[Confirmation](ctx, "confirm", "Please confirm"); err != nil {
		return Text{}, err
	}
	return Text{Text: "Confirmed."}, nil
}

// Asks only what the client declared it answers.
//
//keel:tool name=test_input_required_result_capabilities version=1.0 effect=read
func AskWhatItCan(ctx context.Context, _ None) (Text, error) {
	var errs []error
	if ask.Accepts(ctx, ask.Elicitation) {
		_, err := ask.Elicit[Name](ctx, "user_name", "What is your name?")
		errs = append(errs, err)
	}
	if ask.Accepts(ctx, ask.Sampling) {
		_, err := ask.Sample(ctx, "greeting", []ask.Message{{Role: "user", Text: "Generate a greeting"}}, 50)
		errs = append(errs, err)
	}
	if ask.Accepts(ctx, ask.Roots) {
		_, err := ask.ListRoots(ctx, "client_roots")
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return Text{}, err
	}
	return Text{Text: "Answered what it could."}, nil
}

func rootCount(roots []ask.Root) string {
	return strings.Repeat("*", len(roots))
}

// Contact is a form with a user name and an email address.
type Contact struct {
	// User's response
	Username string `json:"username"`
	// User's email address
	Email string `json:"email"`
}

// MessageArgs carry the question to show the person.
type MessageArgs struct {
	// What the person reads.
	Message string `json:"message" jsonschema:"maxLength=2000"`
}

// Asks the person for a user name and an email address, with
// the message the call gives, and says what they answered.
//
//keel:tool name=test_elicitation version=1.0 effect=read
func AskContact(ctx context.Context, in MessageArgs) (Text, error) {
	c, err := ask.Elicit[Contact](ctx, "contact", in.Message)
	if errors.Is(err, ask.ErrDeclined) {
		return Text{Text: "User response: " + err.Error()}, nil
	}
	if err != nil {
		return Text{}, err
	}
	return Text{Text: "User response: accept, username=" + c.Username + ", email=" + c.Email}, nil
}

// PromptArgs carry the prompt for the client's model.
type PromptArgs struct {
	// What the model completes.
	Prompt string `json:"prompt" jsonschema:"maxLength=2000"`
}

// Asks the client's model to complete the prompt the call
// gives.
//
//keel:tool name=test_sampling version=1.0 effect=read
func AskCompletion(ctx context.Context, in PromptArgs) (Text, error) {
	c, err := ask.Sample(ctx, "completion", []ask.Message{{Role: "user", Text: in.Prompt}}, 100)
	if err != nil {
		return Text{}, err
	}
	return Text{Text: "LLM response: " + c.Text}, nil
}

// Needs the client's model, which a client that did not
// declare sampling cannot lend: the call is refused naming the capability.
//
//keel:tool name=test_missing_capability version=1.0 effect=read
func NeedsSampling(ctx context.Context, _ None) (Text, error) {
	c, err := ask.Sample(ctx, "completion", []ask.Message{{Role: "user", Text: "Say something."}}, 20)
	if err != nil {
		return Text{}, err
	}
	return Text{Text: c.Text}, nil
}

// Asks a name: on the 2026-07-28 revision its answer's
// stream carries the input request inside the result, never a request of
// its own.
//
//keel:tool name=test_streaming_elicitation version=1.0 effect=read
func AskWhileStreaming(ctx context.Context, _ None) (Text, error) {
	n, err := ask.Elicit[Name](ctx, "user_name", "What is your name?")
	if err != nil {
		return Text{}, err
	}
	return Text{Text: "Hello, " + n.Name + "!"}, nil
}

// Profile is a form whose every member has a default (SEP-1034).
type Profile struct {
	// User name
	Name string `json:"name,omitempty" jsonschema:"default=John Doe"`
	// User age
	Age int `json:"age,omitempty" jsonschema:"default=30"`
	// User score
	Score float64 `json:"score,omitempty" jsonschema:"default=95.5"`
	// User status
	Status string `json:"status,omitempty" jsonschema:"enum=active,enum=inactive,enum=pending,default=active"`
	// Verification status
	Verified bool `json:"verified,omitempty" jsonschema:"default=true"`
}

// Asks for a profile whose members have defaults, and says
// what came back.
//
//keel:tool name=test_elicitation_sep1034_defaults version=1.0 effect=read
func AskWithDefaults(ctx context.Context, _ None) (Text, error) {
	p, err := ask.Elicit[Profile](ctx, "profile", "Test client default value handling - please accept with defaults")
	if errors.Is(err, ask.ErrDeclined) {
		return Text{Text: "Elicitation completed: " + err.Error()}, nil
	}
	if err != nil {
		return Text{}, err
	}
	content, _ := json.Marshal(p)
	return Text{Text: "Elicitation completed: action=accept, content=" + string(content)}, nil
}

// Entry is a form with a name and a yes or no.
type Entry struct {
	Name    string `json:"name"`
	Confirm bool   `json:"confirm,omitempty"`
}

// Asks two entries at once: a task's client may answer them
// one at a time.
//
//keel:tool name=multi_input version=1.0 effect=read
func AskTwoAtOnce(ctx context.Context, _ None) (Text, error) {
	a, err1 := ask.Elicit[Entry](ctx, "first", "First entry?")
	b, err2 := ask.Elicit[Entry](ctx, "second", "Second entry?")
	if err := errors.Join(err1, err2); err != nil {
		return Text{}, err
	}
	return Text{Text: a.Name + " and " + b.Name}, nil
}
