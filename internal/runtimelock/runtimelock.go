// Package runtimelock computes the lock of runtime.ToolInfo contracts, for
// keelgen (which writes it) and runtime/keeltest (which locks hand-made
// sets). The runtime itself, which this package's import of it keeps from
// importing back, maps its contracts the same way at start (runtime/lock.go);
// TestBothLockMappingsAgreeOnEveryField holds the two to one mapping, field
// by field, and fails on a ToolInfo field it does not list.
package runtimelock

import (
	"github.com/keelgen/keel/internal/lockfile"
	"github.com/keelgen/keel/runtime"
)

// Contract is info as the lock reads it.
func Contract(info runtime.ToolInfo) lockfile.Contract {
	c := lockfile.Contract{Name: info.Name, Version: info.Version, Effect: string(info.Effect), Description: info.Description,
		InputSchema: info.InputSchema, OutputSchema: info.OutputSchema, Title: info.Title, Approve: info.Approve,
		Destructive: info.Hints.Destructive, Idempotent: info.Hints.Idempotent, OpenWorld: info.Hints.OpenWorld,
		Deferred: info.Deferred, Namespace: info.Namespace, Content: info.Content, Scopes: info.Scopes, Groups: info.Groups,
		LaxNumbers: info.LaxNumbers, OwnText: info.OwnText, NoTextCopy: info.NoTextCopy, Meta: info.Meta}
	for _, i := range info.Icons {
		c.Icons = append(c.Icons, lockfile.Icon{Src: i.Src, MIMEType: i.MIMEType, Sizes: i.Sizes, Theme: i.Theme})
	}
	for _, e := range info.Errors {
		c.Errors = append(c.Errors, string(e))
	}
	return c
}

// New computes the lock of infos, sorted by name.
func New(infos []runtime.ToolInfo) (lockfile.Lock, error) {
	contracts := make([]lockfile.Contract, len(infos))
	for i, info := range infos {
		contracts[i] = Contract(info)
	}
	return lockfile.New(contracts)
}
