// Package contract treats the generated tool set as a versioned contract:
// it builds keel.lock.json, compares a new generation with the committed
// lock (and the committed schemas, to say how they changed), refuses a
// changed contract whose version was not bumped enough, and renders the
// review diff.
package contract

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/internal/lockfile"
	"github.com/keelgen/keel/internal/schemamodel"
	"github.com/keelgen/keel/runtime"
)

// Level is how large a change is, and so which version bump it needs.
type Level int

const (
	Patch Level = iota + 1 // the description changed
	Minor                  // something was added that no caller relies on
	Major                  // a caller that worked before may fail now
)

func (l Level) String() string {
	return map[Level]string{Patch: "patch", Minor: "minor", Major: "major"}[l]
}

// Item is one change to one part of a tool's contract.
type Item struct {
	Part  string // "input", "output", "effect", "hints", "errors", "content", "scopes", "groups", "icons", "meta", "lax", "title", "description"
	Text  string
	Level Level
}

// Kind says what happened to a tool.
type Kind int

const (
	Unchanged Kind = iota
	Added
	Removed
	Changed
)

// ToolChange is what happened to one tool between the lock and now.
type ToolChange struct {
	Name     string
	Kind     Kind
	Old, New *lockfile.Entry
	Items    []Item // for Changed
}

// Level is the largest level among the items.
func (c ToolChange) Level() Level {
	var l Level
	for _, it := range c.Items {
		l = max(l, it.Level)
	}
	return l
}

// Infos turns the model and its schemas into the contracts the runtime will
// hold, in tool-name order.
func Infos(pkg *model.Package, schemas map[string]model.Schemas) []runtime.ToolInfo {
	var infos []runtime.ToolInfo
	for _, t := range pkg.Tools {
		s := schemas[t.Name]
		info := runtime.ToolInfo{Name: t.Name, Version: t.Version, Effect: runtime.Effect(t.Effect),
			Description: t.Description, InputSchema: s.Input, OutputSchema: s.Output, Timeout: t.Timeout,
			Title: t.Title, Approve: t.Approve, Hints: t.Hints, Deferred: t.Deferred, Namespace: t.Namespace, Content: t.Content, Scopes: t.Scopes, Groups: t.Groups,
			LaxNumbers: t.LaxNumbers, OwnText: t.OwnText, NoTextCopy: t.NoTextCopy, Icons: t.Icons, Meta: t.Meta}
		for _, c := range t.Errors {
			info.Errors = append(info.Errors, runtime.Code(c))
		}
		infos = append(infos, info)
	}
	return infos
}

// Previous is the committed contract: the lock, and the directories of the
// committed schema files whose digests match it.
type Previous struct {
	Lock    lockfile.Lock
	dirs    []string
	schemas map[string][]byte // digest → schema file; read by Compare only when a schema changed
}

// ReadPrevious reads the lock at lockPath; the schema files in schemaDirs
// explain, by digest, how a locked schema changed. No lock yet is (nil,
// nil): every tool is new.
func ReadPrevious(lockPath string, schemaDirs ...string) (*Previous, error) {
	data, err := os.ReadFile(lockPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l, err := lockfile.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lockPath, err)
	}
	return &Previous{Lock: l, dirs: schemaDirs}, nil
}

// readSchemas indexes the schema files of p's directories by digest. An
// unchanged set never needs them: reading and digesting every file was a
// tenth of a run at 1,000 tools.
func (p *Previous) readSchemas() error {
	p.schemas = map[string][]byte{}
	var files []string
	for _, dir := range p.dirs {
		found, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		files = append(files, found...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		d, err := lockfile.Digest(b)
		if err != nil {
			continue // not JSON: it explains nothing
		}
		p.schemas[d] = b
	}
	return nil
}

// Compare lists what changed from prev to the tools now, sorted by name.
func Compare(prev *Previous, now []runtime.ToolInfo) ([]ToolChange, lockfile.Lock, error) {
	lock, err := lockfile.OfInfos(now)
	if err != nil {
		return nil, lockfile.Lock{}, err
	}
	old := map[string]*lockfile.Entry{}
	if prev != nil {
		for i := range prev.Lock.Tools {
			old[prev.Lock.Tools[i].Name] = &prev.Lock.Tools[i]
		}
	}
	for i := range lock.Tools {
		if ot, ok := old[lock.Tools[i].Name]; ok && prev.schemas == nil &&
			(ot.InputSchemaDigest != lock.Tools[i].InputSchemaDigest || ot.OutputSchemaDigest != lock.Tools[i].OutputSchemaDigest) {
			if err := prev.readSchemas(); err != nil {
				return nil, lockfile.Lock{}, err
			}
		}
	}
	var changes []ToolChange
	for i := range lock.Tools {
		nt, info := &lock.Tools[i], now[i]
		ot, ok := old[nt.Name]
		delete(old, nt.Name)
		if !ok {
			changes = append(changes, ToolChange{Name: nt.Name, Kind: Added, New: nt})
			continue
		}
		items := compareTool(prev, ot, nt, info)
		kind := Changed
		if len(items) == 0 {
			kind = Unchanged
		}
		changes = append(changes, ToolChange{Name: nt.Name, Kind: kind, Old: ot, New: nt, Items: items})
	}
	for _, ot := range old {
		changes = append(changes, ToolChange{Name: ot.Name, Kind: Removed, Old: ot})
	}
	slices.SortFunc(changes, func(a, b ToolChange) int { return strings.Compare(a.Name, b.Name) })
	return changes, lock, nil
}

// compareHints compares the hints as they resolve (an unstated hint is its
// default, so stating the default changes nothing). A hint that drops a
// caution (no longer destructive, now idempotent, now closed-world) lets
// clients skip a confirmation they made before: major. One that adds a
// caution: minor.
func compareHints(ot, nt *lockfile.Entry) []Item {
	resolve := func(t *lockfile.Entry) runtime.ToolInfo {
		return runtime.ToolInfo{Effect: runtime.Effect(t.Effect), Hints: runtime.Hints{Destructive: t.Destructive, Idempotent: t.Idempotent, OpenWorld: t.OpenWorld}}
	}
	o, n := resolve(ot), resolve(nt)
	var items []Item
	for _, h := range []struct {
		name      string
		old, new  bool
		cautionIs bool // the value that asks clients for care
		unstated  bool // on both sides: a change of effect moved the default, and says so itself
	}{
		{"destructive", o.Destructive(), n.Destructive(), true, ot.Destructive == nil && nt.Destructive == nil},
		{"idempotent", o.Idempotent(), n.Idempotent(), false, ot.Idempotent == nil && nt.Idempotent == nil},
		{"open-world", o.OpenWorld(), n.OpenWorld(), true, ot.OpenWorld == nil && nt.OpenWorld == nil},
	} {
		switch {
		case h.old == h.new, h.unstated && ot.Effect != nt.Effect:
		case h.new == h.cautionIs:
			items = append(items, Item{"hints", fmt.Sprintf("hint %s changed from %v to %v", h.name, h.old, h.new), Minor})
		default:
			items = append(items, Item{"hints", fmt.Sprintf("hint %s changed from %v to %v: clients may now skip a confirmation", h.name, h.old, h.new), Major})
		}
	}
	return items
}

// listFields are a lock entry's lists, each compared as a set: what a
// member added and a member removed say, and how much each changes for a
// client.
var listFields = []struct {
	part                     string
	list                     func(*lockfile.Entry) []string
	added, removed           string
	addedLevel, removedLevel Level
}{
	{"errors", func(e *lockfile.Entry) []string { return e.Errors }, "error code %q added", "error code %q removed", Minor, Minor},
	// Content is output: a new type may reach a client that cannot take it;
	// one no longer returned breaks no one.
	{"content", func(e *lockfile.Entry) []string { return e.Content }, "content type %q added", "content type %q removed", Major, Minor},
	// A scope required is a caller who could call refused.
	{"scopes", func(e *lockfile.Entry) []string { return e.Scopes }, "scope %q required", "scope %q no longer required", Major, Minor},
	// Joining a group offers the tool to more servers; a server that
	// enables only a group it leaves no longer offers it.
	{"groups", func(e *lockfile.Entry) []string { return e.Groups }, "joins group %q", "leaves group %q", Minor, Major},
}

// comparePresentation grades what a client shows beside the words: an icon
// is a patch; a _meta entry (an MCP App's ui resource) changes what a host
// does, minor.
func comparePresentation(ot, nt *lockfile.Entry) []Item {
	var items []Item
	if !lockfile.SameIcons(ot.Icons, nt.Icons) {
		items = append(items, Item{"icons", "icons changed", Patch})
	}
	for _, k := range slices.Sorted(maps.Keys(nt.Meta)) {
		switch old, ok := ot.Meta[k]; {
		case !ok:
			items = append(items, Item{"meta", fmt.Sprintf("_meta %q added", k), Minor})
		case !lockfile.SameJSON(old, nt.Meta[k]):
			items = append(items, Item{"meta", fmt.Sprintf("_meta %q changed", k), Minor})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(ot.Meta)) {
		if _, ok := nt.Meta[k]; !ok {
			items = append(items, Item{"meta", fmt.Sprintf("_meta %q removed", k), Minor})
		}
	}
	return items
}

// compareText grades the text form: a host that hands MCP's text block to
// the model now reads the author's words, or the JSON again (minor).
func compareText(ot, nt *lockfile.Entry) []Item {
	switch {
	case !ot.OwnText && nt.OwnText:
		return []Item{{"text", "the text block says the result in its author's words (MCPText), not as JSON", Minor}}
	case ot.OwnText && !nt.OwnText:
		return []Item{{"text", "the text block says the result as JSON again, not in its author's words", Minor}}
	case !ot.NoTextCopy && nt.NoTextCopy:
		return []Item{{"text", "no JSON copy of the result as text for a 2026-07-28 client (text=none): a host that reads only the text block sees none", Minor}}
	case ot.NoTextCopy && !nt.NoTextCopy:
		return []Item{{"text", "the result's JSON copied as text again for a 2026-07-28 client", Minor}}
	}
	return nil
}

// compareLax grades lax=numbers: reading laxly takes calls refused before
// (minor); strictly again refuses a "5" the tool took (major).
func compareLax(ot, nt *lockfile.Entry) []Item {
	switch {
	case !ot.LaxNumbers && nt.LaxNumbers:
		return []Item{{"lax", "numbers read laxly (lax=numbers): a numeric string or 2.0 taken for a number", Minor}}
	case ot.LaxNumbers && !nt.LaxNumbers:
		return []Item{{"lax", "numbers read strictly again: a numeric string the tool took is refused", Major}}
	}
	return nil
}

func compareTool(prev *Previous, ot, nt *lockfile.Entry, info runtime.ToolInfo) []Item {
	var items []Item
	if ot.DescriptionDigest != nt.DescriptionDigest {
		items = append(items, Item{"description", "description changed", Patch})
	}
	switch {
	case ot.Effect == nt.Effect:
	case ot.Effect == string(runtime.EffectRead) && nt.Effect == string(runtime.EffectWrite):
		items = append(items, Item{"effect", "effect escalated from read to write", Major})
	default:
		items = append(items, Item{"effect", fmt.Sprintf("effect changed from %s to %s", ot.Effect, nt.Effect), Minor})
	}
	if ot.Title != nt.Title {
		items = append(items, Item{"title", "title changed", Patch})
	}
	if ot.Approve != nt.Approve {
		items = append(items, Item{"approve", "approval wording changed", Patch})
	}
	items = append(items, compareHints(ot, nt)...)
	for _, f := range listFields {
		for _, v := range setDiff(f.list(ot), f.list(nt)) {
			items = append(items, Item{f.part, fmt.Sprintf(f.added, v), f.addedLevel})
		}
		for _, v := range setDiff(f.list(nt), f.list(ot)) {
			items = append(items, Item{f.part, fmt.Sprintf(f.removed, v), f.removedLevel})
		}
	}
	items = append(items, comparePresentation(ot, nt)...)
	items = append(items, compareLax(ot, nt)...)
	items = append(items, compareText(ot, nt)...)
	for _, side := range []struct {
		part     string
		old, new string
		doc      []byte
	}{{"input", ot.InputSchemaDigest, nt.InputSchemaDigest, info.InputSchema}, {"output", ot.OutputSchemaDigest, nt.OutputSchemaDigest, info.OutputSchema}} {
		if side.old == side.new {
			continue
		}
		newDoc, err := schemamodel.Parse(side.doc)
		if err != nil { // keelgen's own schema: unreachable, and never read as unchanged
			items = append(items, Item{side.part, side.part + " schema changed", Major})
			continue
		}
		oldDoc, err := schemamodel.Parse(prev.schemas[side.old])
		if prev.schemas[side.old] == nil || err != nil {
			items = append(items, Item{side.part, side.part + " schema changed (the committed schema file that would say how is missing or differs from the lock)", Major})
			continue
		}
		d := newSchemaDiff(side.part, oldDoc, newDoc)
		d.compare(oldDoc, newDoc, "")
		if len(d.items) == 0 { // only formatting-invisible differences the walk does not name
			d.items = append(d.items, Item{side.part, side.part + " schema changed", Major})
		}
		items = append(items, d.items...)
	}
	return items
}

// setDiff lists the members of b that are not in a.
func setDiff[T comparable](a, b []T) []T {
	in := map[T]bool{}
	for _, c := range a {
		in[c] = true
	}
	var out []T
	for _, c := range b {
		if !in[c] {
			out = append(out, c)
		}
	}
	return out
}
