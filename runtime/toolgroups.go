package runtime

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/keelgen/keel/internal/execinfo"
	"github.com/keelgen/keel/internal/toolrules"
)

// ToolGroups is which of a set's tools a server offers, by the groups they
// declare (//keel:tool groups=): its operator's choice at start, the same
// for every caller. A tool it leaves out is absent through every door, as
// one a ToolFilter hides: not listed, and a call to it is unknown_tool.
type ToolGroups struct {
	// Only offers only tools of at least one of these groups; none offers
	// every tool.
	Only []string
	// Without leaves out every tool of one of these groups.
	Without []string
	// ReadOnly offers only tools whose effect is read.
	ReadOnly bool
}

// WithToolGroups offers only the tools ts keeps. A group that is not a group
// name, or that no tool of the set declares, fails NewExecutor: a
// misspelled flag never empties a server silently.
func WithToolGroups(ts ToolGroups) Option {
	return func(e *Executor) {
		for _, g := range slices.Concat(ts.Only, ts.Without) {
			if !toolrules.GroupName(g) {
				e.refuse("WithToolGroups", "%q is not a group name (^[a-z][a-z0-9_-]{0,63}$)", g)
			}
		}
		e.groups = &ts
	}
}

// Flags registers -groups, -without-groups and -read-only on fs, each
// setting ts: a server's main passes its operator's choice through, as
// `-groups dashboards,alerts -read-only`.
func (ts *ToolGroups) Flags(fs *flag.FlagSet) {
	fs.Func("groups", "offer only the tools of these groups (comma-separated)", func(v string) error {
		ts.Only = append(ts.Only, splitGroups(v)...)
		return nil
	})
	fs.Func("without-groups", "leave out the tools of these groups (comma-separated)", func(v string) error {
		ts.Without = append(ts.Without, splitGroups(v)...)
		return nil
	})
	fs.BoolVar(&ts.ReadOnly, "read-only", ts.ReadOnly, "offer only the tools whose effect is read")
}

func splitGroups(v string) []string {
	var out []string
	for _, g := range strings.Split(v, ",") {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return out
}

// keeps reports whether ts offers the tool info describes.
func (ts *ToolGroups) keeps(info *ToolInfo) bool {
	if ts.ReadOnly && info.Effect != EffectRead {
		return false
	}
	in := func(groups []string) bool {
		return slices.ContainsFunc(info.Groups, func(g string) bool { return slices.Contains(groups, g) })
	}
	return (len(ts.Only) == 0 || in(ts.Only)) && !in(ts.Without)
}

// applyToolGroups moves the tools the ToolGroups leave out from verified
// to off, after checking that each group they name is declared by some tool.
func (e *Executor) applyToolGroups(tools []*Tool) error {
	if e.groups == nil {
		return nil
	}
	var declared []string
	for _, t := range tools {
		declared = append(declared, t.info.Groups...)
	}
	for _, g := range slices.Concat(e.groups.Only, e.groups.Without) {
		if !slices.Contains(declared, g) {
			slices.Sort(declared)
			return fmt.Errorf("WithToolGroups: no tool of the set is in group %q (its groups: %s)", g, groupList(slices.Compact(declared)))
		}
	}
	e.off = map[*Tool]struct{}{}
	for _, t := range tools {
		if !e.groups.keeps(&t.info) {
			delete(e.verified, t)
			e.off[t] = struct{}{}
		}
	}
	return nil
}

func groupList(groups []string) string {
	if len(groups) == 0 {
		return "none"
	}
	return strings.Join(groups, ", ")
}

// The MCP server registers with the SDK only the tools the executor's
// groups offer, which the runtime does not export: execinfo is a leaf
// runtime imports, so its hook takes any.
func init() {
	execinfo.Offered = func(exec any, tool any) bool {
		_, ok := exec.(*Executor).verified[tool.(*Tool)]
		return ok
	}
}
