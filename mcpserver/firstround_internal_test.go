package mcpserver

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The AskFirst handshake has one winner and no path that waits forever:
// the handler's end, its question and the end of the wait, raced many
// times with the timer firing as the handler ends. Each round ends, and
// the question reaches exactly one of the call and the task.
func TestTheFirstRoundHasOneWinner(t *testing.T) {
	question := &mcp.CallToolResult{InputRequests: map[string]mcp.InputRequest{"q": &mcp.ElicitParams{}}}
	for i := range 4000 {
		f := newFirstRound()
		asks := i%2 == 0
		var res *mcp.CallToolResult
		if asks {
			res = question
		}
		took := make(chan bool, 1)
		go func() {
			time.Sleep(time.Duration(i%7) * time.Microsecond)
			took <- f.take(res, nil)
		}()
		waited := make(chan *mcp.CallToolResult, 1)
		go func() { waited <- f.wait(time.Duration(i%5) * time.Microsecond) }()
		var got *mcp.CallToolResult
		select {
		case got = <-waited:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d (asks %v): the wait never ended", i, asks)
		}
		callTook := <-took
		if callTook != (got != nil) {
			t.Fatalf("round %d (asks %v): the run says the call took the question: %v; the call got %v", i, asks, callTook, got)
		}
		if !asks && got != nil {
			t.Fatalf("round %d: the call got a question no one asked", i)
		}
	}
}
