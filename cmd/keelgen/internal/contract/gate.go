package contract

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/runtime"
)

// Gate refuses every tool whose contract changed since the lock without a
// large enough version bump, at the tool's directive. Semantic versions
// (1.2.0) are classified: a major change needs a major bump (a minor one
// below 1.0.0), a minor change a minor bump, a description change a patch;
// other versions must simply go up. It also warns about every effect
// escalation, bumped or not. lockName names the lock compared with, as the
// user knows it (keel.lock.json, or the -lock file, or the base's).
func Gate(changes []ToolChange, tools []*model.Tool, lockName string) (errs, warnings []model.Diagnostic) {
	pos := map[string]model.Diagnostic{}
	for _, t := range tools {
		pos[t.Name] = model.Diagnostic{Pos: t.Pos}
	}
	for _, c := range changes {
		if c.Kind != Changed && c.Kind != Unchanged {
			continue
		}
		at := pos[c.Name]
		report := func(list *[]model.Diagnostic, format string, args ...any) {
			d := at
			d.Message = c.Name + ": " + fmt.Sprintf(format, args...)
			*list = append(*list, d)
		}
		oldV, newV := c.Old.Version, c.New.Version
		if cmp := compareVersions(newV, oldV); cmp < 0 {
			report(&errs, "version %s is lower than %s in %s; versions only go up", newV, oldV, lockName)
			continue
		}
		for _, it := range c.Items {
			if it.Part == "effect" && c.New.Effect == string(runtime.EffectWrite) && c.Old.Effect == string(runtime.EffectRead) {
				report(&warnings, "warning: effect escalated from read to write (version %s → %s): the tool now has side effects", oldV, newV)
			}
		}
		if c.Kind == Unchanged {
			continue
		}
		what := fmt.Sprintf("%s changed since %s", partsPhrase(c.Items), lockName)
		if detail := itemsPhrase(c.Items); detail != partsPhrase(c.Items)+" changed" {
			what += " (" + detail + ")"
		}
		need := c.Level()
		switch {
		case newV == oldV:
			if next, ok := requiredVersion(oldV, need); ok {
				report(&errs, "%s; bump version to %s or later (a %s change)", what, next, need)
			} else {
				report(&errs, "%s; bump version", what)
			}
		case isSemver(oldV) && isSemver(newV):
			if next, _ := requiredVersion(oldV, need); compareVersions(newV, next) < 0 {
				report(&errs, "%s; a %s change needs version %s or later, not %s", what, need, next, newV)
			}
		}
	}
	return errs, warnings
}

// partsPhrase: "input schema", "input schema and effect", ...
func partsPhrase(items []Item) string {
	nouns := map[string]string{"input": "input schema", "output": "output schema", "effect": "effect", "hints": "hints", "errors": "error codes",
		"content": "content types", "scopes": "scopes", "groups": "groups", "title": "title", "description": "description"}
	var parts []string
	seen := map[string]bool{}
	for _, part := range []string{"input", "output", "effect", "hints", "errors", "content", "scopes", "groups", "title", "description"} {
		for _, it := range items {
			if it.Part == part && !seen[part] {
				seen[part] = true
				parts = append(parts, nouns[part])
			}
		}
	}
	switch len(parts) {
	case 0:
		return "contract"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// itemsPhrase lists the items, largest first, at most three.
func itemsPhrase(items []Item) string {
	sorted := append([]Item(nil), items...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && sorted[j].Level > sorted[j-1].Level; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	var texts []string
	for i, it := range sorted {
		if i == 3 {
			texts = append(texts, fmt.Sprintf("and %d more", len(sorted)-3))
			break
		}
		texts = append(texts, it.Text)
	}
	return strings.Join(texts, "; ")
}

func isSemver(v string) bool { return strings.Count(v, ".") == 2 }

// parts splits a dotted version; the load stage admits only dotted numbers.
func parts(v string) []int {
	var out []int
	for _, p := range strings.Split(v, ".") {
		n, _ := strconv.Atoi(p)
		out = append(out, n)
	}
	return out
}

// compareVersions compares dotted numbers as semantic versions, missing
// parts counting as 0 ("1" is 1.0.0).
func compareVersions(a, b string) int { return semver.Compare("v"+a, "v"+b) }

// requiredVersion is the smallest semantic version after old that a change
// of level need allows; ok is false for versions that are not semantic.
func requiredVersion(old string, need Level) (string, bool) {
	if !isSemver(old) {
		return "", false
	}
	p := parts(old)
	if p[0] == 0 && need == Major { // below 1.0.0 a minor bump may break
		need = Minor
	}
	switch need {
	case Major:
		return fmt.Sprintf("%d.0.0", p[0]+1), true
	case Minor:
		return fmt.Sprintf("%d.%d.0", p[0], p[1]+1), true
	default:
		return fmt.Sprintf("%d.%d.%d", p[0], p[1], p[2]+1), true
	}
}
