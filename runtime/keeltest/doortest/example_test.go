package doortest_test

import (
	"context"
	"fmt"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest/doortest"
)

// A door's test, here the executor itself as the door: list the tools as
// the fixture's caller, send every call of the corpus, and check each
// answer and that it was audited. A door of yours sends each call in its
// own shape (a provider's tool call, a framework's invocation, a frame on
// its transport) and hands its answer back the same way.
func Example() {
	ctx := context.Background()
	f, err := doortest.New()
	if err != nil {
		panic(err)
	}
	var listed []string
	for _, m := range f.Exec.ModelToolsFor(ctx, doortest.Caller()) {
		listed = append(listed, m.Name)
	}
	fmt.Println("listed:", doortest.CheckListed(listed))
	problems := 0
	for i, c := range doortest.Calls() {
		id := fmt.Sprint("call-", i)
		r := f.Exec.Execute(ctx, doortest.Caller(), runtime.ToolCall{ID: id, Name: c.Tool, Arguments: c.Args()})
		message := ""
		if r.Error != nil {
			message = r.Error.Message
		}
		if doortest.CheckAnswer(c, r.Code(), message) != nil || !f.Audited(id) {
			problems++
		}
	}
	fmt.Println("problems:", problems)
	// Output:
	// listed: <nil>
	// problems: 0
}
