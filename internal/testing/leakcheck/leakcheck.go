// Package leakcheck is the test oracle for "nothing internal reaches the
// model": a result's message must be one the contract allows, and no message
// may carry Go package or type names, positions, stacks, paths or schema URLs.
package leakcheck

import (
	"fmt"
	"regexp"

	"github.com/keelgen/keel/runtime"
)

// FixedMessages are the messages the executor writes itself, besides the
// unknown_tool message, which lists tool names.
var FixedMessages = []string{
	"The arguments do not match the tool's input schema.",
	"This call needs approval before it can run.",
	"The tool failed with an internal error.",
	"The tool produced a result that does not match its output schema.",
	"The tool did not finish in time.",
}

// Pattern matches what must never reach a model.
var Pattern = regexp.MustCompile(`main\.|runtime\.|struct field|\*errors\.|\.go:|goroutine|panic|/|keel:|https?:|jsonschema|reflect`)

// Check returns an error when r's message is neither a fixed message nor one
// of allowed (the unknown_tool message, the handlers' business messages), or
// when any message or detail matches Pattern.
func Check(r runtime.ToolResult, allowed ...string) error {
	if r.Error == nil {
		return nil
	}
	msg := r.Error.Message
	if Pattern.MatchString(msg) {
		return fmt.Errorf("message %q leaks internals", msg)
	}
	for _, d := range r.Error.Details {
		if Pattern.MatchString(d.Keyword) {
			return fmt.Errorf("detail %+v leaks internals", d)
		}
	}
	for _, m := range append(FixedMessages, allowed...) {
		if msg == m {
			return nil
		}
	}
	return fmt.Errorf("message %q is not one the contract allows", msg)
}
