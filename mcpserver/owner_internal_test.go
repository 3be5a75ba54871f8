package mcpserver

import (
	"testing"

	"github.com/keelgen/keel/runtime"
)

// A task's owner is its creator's tenant and principal, told apart
// whatever bytes they hold: tenant "a\x00b" with principal "c" and tenant
// "a" with principal "b\x00c" were one owner when the two were joined
// with a NUL, and each could read the other's tasks.
func TestTaskOwnersDoNotCollide(t *testing.T) {
	pairs := [][2]string{{"a\x00b", "c"}, {"a", "b\x00c"}, {"ab", "c"}, {"a", "bc"}, {"", "abc"}, {"abc", ""}, {"1:a", "b"}, {"1", ":ab"}}
	seen := map[string][2]string{}
	for _, p := range pairs {
		o := owner(runtime.ExecutionContext{Tenant: p[0], Principal: p[1]})
		if q, ok := seen[o]; ok {
			t.Errorf("tenant %q principal %q and tenant %q principal %q are one owner", p[0], p[1], q[0], q[1])
		}
		seen[o] = p
	}
}
