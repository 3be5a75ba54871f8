package contract

import (
	"fmt"
	"strings"

	"github.com/keelgen/keel/internal/lockfile"
	"github.com/keelgen/keel/runtime"
)

// AnyChange reports whether any tool was added, removed or changed.
func AnyChange(changes []ToolChange) bool {
	for _, c := range changes {
		if c.Kind != Unchanged || c.Old.Version != c.New.Version {
			return true
		}
	}
	return false
}

// Diff renders the review diff of a pull request's tool set against the
// lock: one line per added, removed or changed tool, then one line per
// change with its level; effect escalations are marked "!".
func Diff(prev *Previous, now lockfile.Lock, changes []ToolChange) string {
	var b strings.Builder
	from := "no " + lockfile.FileName
	if prev != nil {
		from = short(prev.Lock.SetDigest)
	}
	moved := deferrals(prev, now)
	if !AnyChange(changes) && len(moved) == 0 {
		fmt.Fprintf(&b, "tool set unchanged: %s\n", short(now.SetDigest))
		return b.String()
	}
	fmt.Fprintf(&b, "tool set %s → %s\n", from, short(now.SetDigest))
	if line := totalBudget(prev, now, len(moved) > 0); line != "" {
		b.WriteString(line)
	}
	for _, m := range moved {
		b.WriteString(m)
	}
	for _, c := range changes {
		switch {
		case c.Kind == Added:
			fmt.Fprintf(&b, "+ %s %s (%s): added, %s\n", c.Name, c.New.Version, c.New.Effect, budget(c.New.ModelBytes))
		case c.Kind == Removed:
			fmt.Fprintf(&b, "- %s %s (%s): removed\n", c.Name, c.Old.Version, c.Old.Effect)
		case c.Kind == Unchanged && c.Old.Version == c.New.Version:
		default:
			fmt.Fprintf(&b, "~ %s %s → %s\n", c.Name, c.Old.Version, c.New.Version)
			if len(c.Items) == 0 {
				fmt.Fprintf(&b, "    version changed; contract unchanged\n")
			}
			for _, it := range c.Items {
				mark := ""
				if it.Part == "effect" && c.New.Effect == string(runtime.EffectWrite) {
					mark = "  !"
				}
				fmt.Fprintf(&b, "    %-5s  %s: %s%s\n", it.Level, it.Part, strings.TrimPrefix(it.Text, it.Part+" "), mark)
			}
			if c.Old.ModelBytes != c.New.ModelBytes {
				fmt.Fprintf(&b, "    budget: %s\n", budgetChange(c.Old.ModelBytes, c.New.ModelBytes))
			}
		}
	}
	return b.String()
}

// totalBudget is the line for the whole set's model-facing size, when it
// changed.
func totalBudget(prev *Previous, now lockfile.Lock, deferralChanged bool) string {
	sum := func(l lockfile.Lock) int {
		n := 0
		for _, t := range l.Tools {
			n += t.ModelBytes
		}
		return n
	}
	old := 0
	if prev != nil {
		old = sum(prev.Lock)
	}
	line := ""
	if sum(now) != old || deferralChanged {
		line = fmt.Sprintf("model-facing definitions: %s\n", budgetChange(old, sum(now)))
	}
	// With deferred tools, what an agent loads up front is what every
	// request pays; the rest it loads on demand, through tool search.
	upfront, later, deferred := 0, 0, 0
	for _, t := range now.Tools {
		if t.Deferred {
			later += t.ModelBytes
			deferred++
		} else {
			upfront += t.ModelBytes
		}
	}
	if deferred > 0 && line != "" {
		line += fmt.Sprintf("  up front: %s; on demand: %s over %d deferred tools\n", budget(upfront), budget(later), deferred)
	}
	return line
}

// deferrals lists the tools this set now loads on demand, or up front again:
// a decision of the set, not a change of any tool's contract (no version
// bump), but a change of what every request carries.
func deferrals(prev *Previous, now lockfile.Lock) []string {
	old := map[string]lockfile.Entry{}
	if prev != nil {
		for _, t := range prev.Lock.Tools {
			old[t.Name] = t
		}
	}
	var out []string
	for _, t := range now.Tools {
		o, ok := old[t.Name]
		switch {
		case !ok && !t.Deferred, ok && o.Deferred == t.Deferred && o.Namespace == t.Namespace:
		case t.Deferred:
			out = append(out, fmt.Sprintf("~ %s: loaded on demand, in namespace %s\n", t.Name, t.Namespace))
		default:
			out = append(out, fmt.Sprintf("~ %s: loaded up front\n", t.Name))
		}
	}
	return out
}

// budget is a size in bytes and estimated tokens.
func budget(n int) string {
	return fmt.Sprintf("%d bytes (~%d tokens)", n, lockfile.EstimateTokens(n))
}

// budgetChange is old → new; a lock from before budgets has none to show.
func budgetChange(old, new int) string {
	if old == 0 {
		return budget(new) + " (not recorded before)"
	}
	return fmt.Sprintf("%d → %d bytes (~%d → ~%d tokens, %+d%%)", old, new,
		lockfile.EstimateTokens(old), lockfile.EstimateTokens(new), (new-old)*100/old)
}

// short abbreviates a digest for reading: sha256:0123456789ab….
func short(digest string) string {
	if len(digest) > len("sha256:")+12 {
		return digest[:len("sha256:")+12] + "…"
	}
	return digest
}
