package report_test

import (
	"context"
	"fmt"

	"github.com/keelgen/keel/runtime/report"
)

// A handler reports how far it is; the server that runs it (mcpserver: a
// client's progress token, a task's status message) decides where reports
// go. Outside a server they go nowhere, and cost nothing.
func ExampleProgress() {
	ctx, stop := report.WithProgress(context.Background(), func(p report.ProgressEntry) {
		fmt.Printf("%s: %v of %v\n", p.Message, p.Done, p.Total)
	}, 0)
	report.Progress(ctx, 1, 3, "Indexing files")
	stop() // the latest report is delivered when the call ends
	report.Progress(context.Background(), 2, 3, "nobody listens")
	// Output:
	// Indexing files: 1 of 3
}
