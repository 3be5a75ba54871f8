package wire

import (
	"context"
	"io/fs"

	"github.com/keelgen/keel/internal/lockfile"
)

// Call is one call's decoded, checked arguments bound to its handler.
// keelgen generates one type per argument and result type; harness code has
// no need to.
type Call interface {
	// Run calls the handler with the arguments and keeps its result.
	Run(ctx context.Context) error
	// Result checks the handler's result and appends its JSON to e.
	Result(e *Encoder) error
}

// EmbeddedLock reads keel.lock.json and its detached signature from the
// generated package's embedded files; either is nil when absent.
func EmbeddedLock(fsys fs.FS) (lock, signature []byte) {
	lock, _ = fs.ReadFile(fsys, lockfile.FileName)
	signature, _ = fs.ReadFile(fsys, lockfile.SignatureFileName)
	return lock, signature
}
