package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/keelgen/keel/internal/execinfo"
)

// ToolFilter is a harness's own rule for which tools a caller has at all
// (a tenant's plan, a feature not yet rolled out to a group). A tool it
// hides is absent for that caller: Executor.ModelToolsFor and an MCP server's
// tools/list leave it out, and a call to it is unknown_tool, exactly as for
// a name the set lacks, so a model cannot tell hidden from absent. A filter
// that panics hides the tool.
type ToolFilter func(ctx context.Context, ec ExecutionContext, tool ToolInfo) bool

// WithToolFilter sets the executor's ToolFilter. A nil filter fails
// NewExecutor.
func WithToolFilter(f ToolFilter) Option {
	return func(e *Executor) {
		if f == nil {
			e.refuse("WithToolFilter", "the filter is nil")
			return
		}
		e.filter = f
	}
}

// Visible reports whether ec may call tool: the executor verified it, its
// scopes are all among ec's, and the ToolFilter (if any) keeps it. A tool
// whose scopes ec lacks is not offered, but a call to it is
// insufficient_scope, naming the scopes to ask for; one the filter hides is
// unknown_tool.
func (e *Executor) Visible(ctx context.Context, ec ExecutionContext, tool *Tool) bool {
	if tool == nil {
		return false
	}
	return missingScopes(tool.info.Scopes, ec.Scopes) == nil && e.offers(ctx, ec, tool)
}

// missingScopes lists the scopes of need that have lacks, nil when none.
func missingScopes(need, have []string) []string {
	var missing []string
	for _, s := range need {
		if !slices.Contains(have, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// offers reports whether the executor offers tool to ec at all, scopes
// aside: it verified the tool and the ToolFilter (if any) keeps it.
func (e *Executor) offers(ctx context.Context, ec ExecutionContext, tool *Tool) bool {
	if tool == nil {
		return false
	}
	if _, ok := e.verified[tool]; !ok {
		return false
	}
	return e.filter == nil || e.kept(ctx, ec, tool)
}

// varies reports whether what a caller sees depends on who it is: the
// executor has a ToolFilter, or a tool declares scopes. When it does not,
// every caller sees the whole set. keel's MCP server asks it through
// execinfo.
func (e *Executor) varies() bool { return e.filter != nil || e.scoped }

// The MCP server asks whether tools/list varies by caller, which a harness
// has no use for: execinfo is a leaf runtime imports, so its hook takes any.
func init() {
	execinfo.Varies = func(exec any) bool { return exec.(*Executor).varies() }
}

// ModelToolsFor is what ec's model is shown: ModelTools of the executor's set,
// less the tools ec may not call (Visible), in the set's order.
func (e *Executor) ModelToolsFor(ctx context.Context, ec ExecutionContext) []ModelTool {
	all := ModelTools(e.set)
	if !e.varies() && len(e.off) == 0 {
		return all
	}
	out := all[:0]
	for _, m := range all {
		if e.Visible(ctx, ec, e.set.Lookup(m.Name)) {
			out = append(out, m)
		}
	}
	return out
}

// unknownMessageFor is the unknown_tool message for ec: the names ec may
// call, when those depend on who calls, so it never names a hidden tool.
func (e *Executor) unknownMessageFor(ctx context.Context, ec ExecutionContext) string {
	if !e.varies() {
		return e.unknownMessage
	}
	var names []string
	for _, t := range e.set.Tools() {
		if e.Visible(ctx, ec, t) {
			names = append(names, t.info.Name)
		}
	}
	return unknownMessage(names)
}

// unknownMessage is the unknown_tool message naming the sorted names a
// caller may call: the first maxListedTools of them, and how many more.
func unknownMessage(names []string) string {
	if len(names) == 0 {
		return msgUnknownTool
	}
	more := ""
	if len(names) > maxListedTools {
		more = fmt.Sprintf(" and %d more", len(names)-maxListedTools)
		names = names[:maxListedTools]
	}
	return msgUnknownTool + " Available tools: " + strings.Join(names, ", ") + more + "."
}
