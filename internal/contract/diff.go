package contract

import (
	"fmt"
	"strings"

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
func Diff(prev *Previous, now runtime.Lock, changes []ToolChange) string {
	var b strings.Builder
	from := "no " + runtime.LockFileName
	if prev != nil {
		from = short(prev.Lock.SetDigest)
	}
	if !AnyChange(changes) {
		fmt.Fprintf(&b, "tool set unchanged: %s\n", short(now.SetDigest))
		return b.String()
	}
	fmt.Fprintf(&b, "tool set %s → %s\n", from, short(now.SetDigest))
	for _, c := range changes {
		switch {
		case c.Kind == Added:
			fmt.Fprintf(&b, "+ %s %s (%s): added\n", c.Name, c.New.Version, c.New.Effect)
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
				if it.Part == "effect" && c.New.Effect == runtime.EffectWrite {
					mark = "  !"
				}
				fmt.Fprintf(&b, "    %-5s  %s: %s%s\n", it.Level, it.Part, strings.TrimPrefix(it.Text, it.Part+" "), mark)
			}
		}
	}
	return b.String()
}

// short abbreviates a digest for reading: sha256:0123456789ab….
func short(digest string) string {
	if len(digest) > len("sha256:")+12 {
		return digest[:len("sha256:")+12] + "…"
	}
	return digest
}
