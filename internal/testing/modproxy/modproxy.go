// Package modproxy builds a Go module proxy on disk (a file:// GOPROXY)
// holding every module of keel's repository at one version, each zipped as
// the go command zips a tagged module (golang.org/x/mod/zip: nested modules
// and vendor directories left out), from the files git would commit: tracked
// and untracked ones, not those .gitignore names. The release rehearsal
// installs keel and its adapters from it as a user installs them from the
// module proxy.
package modproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// Module is one module of the repository.
type Module struct {
	Path  string // github.com/keelgen/keel/adapters/eino
	Dir   string // adapters/eino, relative to the repository
	GoMod []byte
}

// Modules lists the modules of the repository at root (a go.mod outside
// testdata, among the files git would commit), keel's own first, and the
// files they hold.
func Modules(root string) ([]Module, []string, error) {
	files, err := gitFiles(root)
	if err != nil {
		return nil, nil, err
	}
	var mods []Module
	for _, f := range files {
		if path.Base(f) != "go.mod" || strings.Contains(f, "/testdata/") || strings.HasPrefix(f, "testdata/") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, nil, err
		}
		mods = append(mods, Module{Path: modfile.ModulePath(data), Dir: path.Dir(f), GoMod: data})
	}
	slices.SortFunc(mods, func(a, b Module) int { return strings.Compare(a.Path, b.Path) })
	if len(mods) == 0 || mods[0].Dir != "." {
		return nil, nil, fmt.Errorf("modproxy: no go.mod at the root of %s", root)
	}
	return mods, files, nil
}

// Build writes into dir a proxy holding mods, the modules of the
// repository at root whose files are files (from Modules), at version.
func Build(root, dir, version string, mods []Module, files []string) error {
	for _, m := range mods {
		if err := add(root, dir, version, m, files); err != nil {
			return fmt.Errorf("modproxy: %s: %w", m.Path, err)
		}
	}
	return nil
}

// add writes m's list, info, mod and zip files.
func add(root, dir, version string, m Module, files []string) error {
	escaped, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	at := filepath.Join(dir, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	var zipped []zip.File
	prefix := ""
	if m.Dir != "." {
		prefix = m.Dir + "/"
	}
	for _, f := range files {
		if rel, ok := strings.CutPrefix(f, prefix); ok {
			zipped = append(zipped, file{root: root, path: f, rel: rel})
		}
	}
	var buf bytes.Buffer
	if err := zip.Create(&buf, module.Version{Path: m.Path, Version: version}, zipped); err != nil {
		return err
	}
	info, err := json.Marshal(struct{ Version, Time string }{version, time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": info, version + ".mod": m.GoMod, version + ".zip": buf.Bytes()} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// gitFiles lists the files at root that a commit of everything would hold.
func gitFiles(root string) ([]string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return nil, fmt.Errorf("modproxy: git ls-files in %s: %w", root, err)
	}
	var files []string
	for f := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if _, err := os.Lstat(filepath.Join(root, f)); err == nil { // a tracked file deleted in the tree is left out
			files = append(files, f)
		}
	}
	return files, nil
}

// file is one file of the tree, named in the zip by rel.
type file struct{ root, path, rel string }

func (f file) Path() string                 { return f.rel }
func (f file) Lstat() (fs.FileInfo, error)  { return os.Lstat(filepath.Join(f.root, f.path)) }
func (f file) Open() (io.ReadCloser, error) { return os.Open(filepath.Join(f.root, f.path)) }
