package keeltemporal_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	keeltemporal "github.com/keelgen/keel/adapters/temporal"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest/doortest"
)

// The corpus through the durable activity, in Temporal's own activity
// environment (its payload converter carries the call as JSON): every call
// is keel's answer, audited under its id. A Temporal worker lists nothing:
// the workflow names the call, and a hidden tool is unknown_tool here too.
func TestDoorActivity(t *testing.T) {
	f, err := doortest.New()
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestActivityEnvironment()
	if err := keeltemporal.Register(env, f.Exec, keeltemporal.Options{}); err != nil {
		t.Fatal(err)
	}
	sent := 0
	for i, c := range doortest.Calls() {
		if !c.NoArguments && !json.Valid([]byte(c.Arguments)) {
			continue // a ToolCall's arguments travel as JSON in the payload
		}
		id := fmt.Sprint("temporal-", i)
		v, err := env.ExecuteActivity(keeltemporal.ActivityName, keeltemporal.Request{Context: doortest.Caller(), Call: runtime.ToolCall{ID: id, Name: c.Tool, Arguments: c.Args()}})
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		var r runtime.ToolResult
		if err := v.Get(&r); err != nil {
			t.Fatal(err)
		}
		msg := ""
		if r.Error != nil {
			msg = r.Error.Message
		}
		if err := doortest.CheckAnswer(c, r.Code(), msg); err != nil {
			t.Error(err)
		}
		if !f.Audited(id) {
			t.Errorf("%s: not audited", c.Name)
		}
		sent++
	}
	t.Logf("temporal: %d calls", sent)
}
