package keelgenkit_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	keelgenkit "github.com/keelgen/keel/adapters/genkit"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest/doortest"
	"github.com/keelgen/keel/runtime/keeltest/frameworktest"
)

// The corpus through Genkit's Generate: it lists only what the caller may
// call, and every call to a listed tool whose arguments Genkit can carry
// (a JSON value it decodes and encodes again) is keel's answer, audited. A
// name it does not list ends Generate with Genkit's own error
// (TestUnknownNameEndsGenerate).
func TestDoorGenerate(t *testing.T) {
	f, err := doortest.New()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tools, err := keelgenkit.Tools(ctx, f.Exec, keelgenkit.Options{Context: func(context.Context) runtime.ExecutionContext { return doortest.Caller() }})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tl := range tools {
		listed = append(listed, tl.(ai.Tool).Definition().Name)
	}
	if err := doortest.CheckListed(listed); err != nil {
		t.Error(err)
	}
	var cases []doortest.Case
	var steps []frameworktest.Step
	for _, c := range doortest.Calls() {
		if c.Tool != doortest.Probe || !c.Decodable() { // what a model plugin can hand Genkit
			continue
		}
		cases = append(cases, c)
		steps = append(steps, frameworktest.Step{Name: c.Name, Tool: c.Tool, Arguments: c.Arguments})
	}
	model := &scripted{steps: steps, read: map[string]string{}}
	g := genkit.Init(ctx)
	m := genkit.DefineModel(g, "scripted/doors", &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}}, model.generate)
	if _, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithTools(tools...), ai.WithPrompt("go")); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		text := model.read[fmt.Sprint("call_", i)] // the output the model read: keel's result
		if err := doortest.CheckDecodedResultJSON(f, c, text); err != nil {
			t.Error(err)
		}
	}
	if f.Records() != len(cases) {
		t.Errorf("%d audit records for %d calls", f.Records(), len(cases))
	}
	t.Logf("genkit: %d calls", len(cases))
}
