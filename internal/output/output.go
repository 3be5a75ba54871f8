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
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/keelgen/keel/internal/render"
)

// Changes is how the directory differs from what keelgen would write. Paths
// are slash-separated, relative to the output directory.
type Changes struct {
	Stale    []string // on disk with other content
	Missing  []string // not on disk
	Orphaned []string // owned by keelgen, no longer generated
}

// Empty reports whether the directory is current.
func (c Changes) Empty() bool { return len(c.Stale)+len(c.Missing)+len(c.Orphaned) == 0 }

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

// Compare reads dir and reports what differs from files.
func Compare(dir string, files []render.File) (Changes, error) {
	var c Changes
	want := map[string]bool{}
	for _, f := range files {
		want[f.Path] = true
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			c.Missing = append(c.Missing, f.Path)
		case err != nil:
			return c, err
		case !bytes.Equal(got, f.Content):
			c.Stale = append(c.Stale, f.Path)
		}
	}
	owned, err := ownedFiles(dir)
	if err != nil {
		return c, err
	}
	for _, p := range owned {
		if !want[p] {
			c.Orphaned = append(c.Orphaned, p)
		}
	}
	return c, nil
}

// ownedFiles lists what keelgen owns in dir: the schema files, and Go files
// that start with keelgen's header.
func ownedFiles(dir string) ([]string, error) {
	var owned []string
	schemas, err := filepath.Glob(filepath.Join(dir, render.SchemaDir, "*.json"))
	if err != nil {
		return nil, err
	}
	for _, s := range schemas {
		owned = append(owned, render.SchemaDir+"/"+filepath.Base(s))
	}
	gofiles, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	for _, g := range gofiles {
		if ok, err := hasHeader(g); err != nil {
			return nil, err
		} else if ok {
			owned = append(owned, filepath.Base(g))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, render.LockFileName)); err == nil {
		owned = append(owned, render.LockFileName)
	}
	sort.Strings(owned)
	return owned, nil
}

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
	return strings.TrimSpace(line) == "// "+render.Header, nil
}

// Write brings dir up to date: changed files are replaced through a
// temporary file and a rename, so none is ever half-written, and orphans
// are removed. Files that are already current are not touched.
func Write(dir string, files []render.File, c Changes) error {
	changed := map[string]bool{}
	for _, p := range append(append([]string(nil), c.Stale...), c.Missing...) {
		changed[p] = true
	}
	for _, f := range files {
		if !changed[f.Path] {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		tmp, err := os.CreateTemp(filepath.Dir(dst), ".keelgen-*")
		if err != nil {
			return err
		}
		_, werr := tmp.Write(f.Content)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr); err != nil {
			os.Remove(tmp.Name())
			return err
		}
		if err := os.Chmod(tmp.Name(), 0o644); err != nil {
			os.Remove(tmp.Name())
			return err
		}
		if err := os.Rename(tmp.Name(), dst); err != nil {
			os.Remove(tmp.Name())
			return err
		}
	}
	for _, p := range c.Orphaned {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			return err
		}
	}
	// A signature of a lock that just changed no longer verifies.
	if changed[render.LockFileName] {
		if err := os.Remove(filepath.Join(dir, render.SignatureFileName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
