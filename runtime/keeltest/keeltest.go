// Package keeltest builds a runtime.ToolSet from tools made with
// runtime.NewTool, for tests: a harness's own tests, and keel's. The
// generated package is the real tool set; this one is for trying an
// executor, a policy or an adapter on hand-made tools.
package keeltest

import (
	"slices"
	"strings"

	"github.com/keelgen/keel/internal/lockfile"
	"github.com/keelgen/keel/runtime"
)

// Set is a ToolSet of List, selected by exact name, with the lock and
// signature a test gives it (none by default).
type Set struct {
	List      []*runtime.Tool
	LockFile  []byte
	Signature []byte
}

// Of returns a set of tools, sorted by name as generated sets are.
func Of(tools ...*runtime.Tool) Set {
	list := slices.Clone(tools)
	slices.SortFunc(list, func(a, b *runtime.Tool) int { return strings.Compare(a.Info().Name, b.Info().Name) })
	return Set{List: list}
}

// Locked is Of with the lock keelgen would write for the tools' contracts,
// so NewExecutor verifies it at start as it verifies a generated set.
func Locked(tools ...*runtime.Tool) (Set, error) {
	s := Of(tools...)
	infos := make([]runtime.ToolInfo, len(s.List))
	for i, t := range s.List {
		infos[i] = t.Info()
	}
	lock, err := lockfile.OfInfos(infos)
	if err != nil {
		return Set{}, err
	}
	s.LockFile, err = lock.Marshal()
	return s, err
}

// Lookup returns the tool whose name is exactly name, or nil.
func (s Set) Lookup(name string) *runtime.Tool {
	for _, t := range s.List {
		if t.Info().Name == name {
			return t
		}
	}
	return nil
}

// Tools returns the tools.
func (s Set) Tools() []*runtime.Tool { return s.List }

// Lock returns the lock and signature the test gave the set.
func (s Set) Lock() (lock, signature []byte) { return s.LockFile, s.Signature }
