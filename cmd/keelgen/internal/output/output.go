// Package output compares keelgen's files with the output directory and
// writes them. It knows which files keelgen owns, so it can report and remove
// orphans without touching anything else.
package output

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/renameio/v2"

	"github.com/keelgen/keel/cmd/keelgen/internal/files"
	"github.com/keelgen/keel/internal/lockfile"
)

// Changes is how the directory differs from what keelgen would write. Paths
// are slash-separated, relative to the output directory.
type Changes struct {
	Stale    []string // on disk with other content
	Missing  []string // not on disk
	Orphaned []string // owned by keelgen, no longer generated
	// Refused are places keelgen must write but will not: a file it does not
	// own, or a symbolic link. Any refusal means nothing may be written.
	Refused []Refusal
}

// Refusal is a path keelgen will not write or delete, and why.
type Refusal struct {
	Path, Reason string
}

// Empty reports whether the directory is current.
func (c Changes) Empty() bool {
	return len(c.Stale)+len(c.Missing)+len(c.Orphaned)+len(c.Refused) == 0
}

// Lines renders one line per changed file, "stale: path" etc.
func (c Changes) Lines(prefix string) []string {
	var out []string
	for _, g := range []struct {
		what  string
		files []string
	}{{"stale", c.Stale}, {"missing", c.Missing}, {"orphaned", c.Orphaned}} {
		for _, f := range g.files {
			out = append(out, fmt.Sprintf("%s: %s", g.what, path.Join(prefix, f)))
		}
	}
	return out
}

// RefusalLines renders one line per refusal, "path: reason".
func (c Changes) RefusalLines(prefix string) []string {
	var out []string
	for _, r := range c.Refused {
		out = append(out, fmt.Sprintf("%s: %s", path.Join(prefix, r.Path), r.Reason))
	}
	return out
}

// Compare reads dir and reports what differs from files. keelgen owns only
// Go files that start with its header, keel.lock.json and its signature,
// and the schema files of the tools that dir's keel.lock.json lists; it
// follows no symbolic link inside dir. Anything else in its way is refused.
func Compare(dir string, generated []files.File) (Changes, error) {
	var c Changes
	own, err := readOwnership(dir)
	if err != nil {
		return c, err
	}
	c.Refused = own.refused
	want := map[string]bool{}
	for _, f := range generated {
		want[f.Path] = true
		if c.refusedUnder(f.Path) {
			continue // its directory is a link: already refused
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			c.Missing = append(c.Missing, f.Path)
			continue
		case err != nil:
			return c, err
		case fi.Mode()&fs.ModeSymlink != 0:
			c.Refused = append(c.Refused, Refusal{f.Path, linkRefused})
			continue
		case !fi.Mode().IsRegular():
			c.Refused = append(c.Refused, Refusal{f.Path, "is not a regular file"})
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			return c, err
		}
		switch {
		case bytes.Equal(got, f.Content):
			// Current, owned or not: there is nothing to write (a deleted
			// lock leaves its schema files unowned, and exactly right).
		case !own.files[f.Path]:
			c.Refused = append(c.Refused, Refusal{f.Path, own.notOwned(f.Path)})
		default:
			c.Stale = append(c.Stale, f.Path)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(own.files)) {
		if own.files[p] && !want[p] && p != files.SignatureFileName {
			c.Orphaned = append(c.Orphaned, p)
		}
	}
	return c, nil
}

func (c Changes) refusedUnder(p string) bool {
	return slices.ContainsFunc(c.Refused, func(r Refusal) bool { return strings.HasPrefix(p, r.Path+"/") })
}

// ownership is what keelgen may replace or delete in an output directory.
type ownership struct {
	files   map[string]bool // slash paths of owned regular files
	refused []Refusal       // links where keelgen would otherwise look
	locked  bool            // dir has a readable keel.lock.json
}

func (o ownership) notOwned(p string) string {
	switch {
	case p == files.LockFileName:
		return "is not a lock keelgen can read (tampered, or not keelgen's); keelgen does not overwrite a file it did not write (restore it from version control, move it, or choose another -out)"
	case strings.HasSuffix(p, ".go"):
		return "exists without keelgen's header; keelgen does not overwrite a file it did not write (move it, or choose another -out)"
	case !o.locked:
		return "exists with other content and no keel.lock.json lists its tool, so keelgen cannot tell that it wrote it and does not overwrite it (restore keel.lock.json from version control, or move the file)"
	default:
		return "exists and keel.lock.json does not list its tool; keelgen does not overwrite a file it did not write (move it, or choose another -out)"
	}
}

// readOwnership lists the files keelgen owns in dir.
func readOwnership(dir string) (ownership, error) {
	o := ownership{files: map[string]bool{}}
	regular := func(rel string) (bool, error) {
		fi, err := o.lstat(dir, rel)
		return fi != nil && fi.Mode().IsRegular(), err
	}
	gofiles, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return o, err
	}
	for _, g := range gofiles {
		rel := filepath.Base(g)
		ok, err := regular(rel)
		if err == nil && ok {
			ok, err = hasHeader(g)
		}
		if err != nil {
			return o, err
		}
		o.files[rel] = ok
	}
	if o.files[files.SignatureFileName], err = regular(files.SignatureFileName); err != nil {
		return o, err
	}
	// A linked schemas/ is refused lock or no lock: without a lock nothing
	// in it is owned, but the schema files are written there.
	schemas, err := o.lstat(dir, files.SchemaDir)
	if err != nil {
		return o, err
	}
	ok, err := regular(files.LockFileName)
	if err != nil || !ok {
		return o, err
	}
	b, err := os.ReadFile(filepath.Join(dir, files.LockFileName))
	if err != nil {
		return o, err
	}
	lock, err := lockfile.Parse(b)
	if err != nil {
		return o, nil // not a lock keelgen wrote: it owns neither it nor the schemas
	}
	o.files[files.LockFileName], o.locked = true, true
	if schemas == nil || !schemas.IsDir() {
		return o, nil
	}
	for _, t := range lock.Tools {
		for _, rel := range []string{files.InputSchemaFile(t.Name), files.OutputSchemaFile(t.Name)} {
			if o.files[rel], err = regular(rel); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

// lstat looks at rel in dir without following a link: nil when there is
// nothing there, or a link, which it refuses.
func (o *ownership) lstat(dir, rel string) (fs.FileInfo, error) {
	fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		o.refused = append(o.refused, Refusal{rel, linkRefused})
		return nil, nil
	}
	return fi, nil
}

const linkRefused = "is a symbolic link; keelgen follows no link inside the output directory"

func hasHeader(file string) (bool, error) {
	f, err := os.Open(file)
	if err != nil {
		return false, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return false, nil
	}
	return strings.TrimSpace(line) == "// "+files.Header, nil
}

// Write brings dir up to date: changed files are replaced through a
// temporary file and a rename, so none is ever half-written, and orphans
// are removed. Files that are already current are not touched.
func Write(dir string, generated []files.File, c Changes) error {
	if len(c.Refused) > 0 {
		return fmt.Errorf("%s: %s", c.Refused[0].Path, c.Refused[0].Reason)
	}
	changed := map[string]bool{}
	for _, p := range append(append([]string(nil), c.Stale...), c.Missing...) {
		changed[p] = true
	}
	for _, f := range generated {
		if !changed[f.Path] {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := renameio.WriteFile(dst, f.Content, 0o644); err != nil {
			return err
		}
	}
	for _, p := range c.Orphaned {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			return err
		}
	}
	// A signature of a lock that just changed no longer verifies.
	if changed[files.LockFileName] {
		if err := os.Remove(filepath.Join(dir, files.SignatureFileName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
