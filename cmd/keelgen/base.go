package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/keelgen/keel/cmd/keelgen/internal/files"
	"github.com/keelgen/keel/internal/lockfile"
)

// base is a base revision's lock and schema files, copied out of git into
// a temporary directory in the output directory's layout.
type base struct {
	dir, lock, name string
}

// baseLock reads keel.lock.json and the schema files of the tools it lists
// from outDir as it was at revision rev, with git show. A revision without
// a lock there is a base without tools: every tool is new.
func baseLock(outDir, rev string) (*base, error) {
	if strings.HasPrefix(rev, "-") {
		return nil, fmt.Errorf("-base %q: a revision does not start with -", rev)
	}
	dir, err := os.MkdirTemp("", "keelgen-base-")
	if err != nil {
		return nil, err
	}
	b := &base{dir: dir, lock: filepath.Join(dir, lockfile.FileName), name: rev + "'s " + lockfile.FileName}
	data, found, err := gitShow(outDir, rev, lockfile.FileName)
	if err != nil || !found {
		if err != nil {
			os.RemoveAll(dir)
		}
		return b, err
	}
	lock, err := lockfile.Parse(data)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %w", b.name, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, files.SchemaDir), 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	written := map[string][]byte{lockfile.FileName: data}
	for _, t := range lock.Tools {
		for _, f := range []string{files.InputSchemaFile(t.Name), files.OutputSchemaFile(t.Name)} {
			if data, found, err := gitShow(outDir, rev, f); err != nil {
				os.RemoveAll(dir)
				return nil, err
			} else if found {
				written[f] = data
			}
		}
	}
	for name, data := range written {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), data, 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	return b, nil
}

// gitShow returns the file at path, relative to dir, as it is at rev;
// found is false when rev has no such file.
func gitShow(dir, rev, path string) (data []byte, found bool, err error) {
	// rev:./path is relative to the command's directory, wherever the
	// repository's root is.
	cmd := exec.Command("git", "show", rev+":./"+path)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		var exit *exec.ExitError
		if errors.As(err, &exit) && (strings.Contains(msg, "does not exist in") || strings.Contains(msg, "exists on disk, but not in")) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("-base %s: git show %s:./%s: %v: %s", rev, rev, path, err, msg)
	}
	return stdout.Bytes(), true, nil
}
