package runtime

import (
	"slices"
	"strings"

	"github.com/keelgen/keel/internal/lockfile"
)

// The one mapping of a ToolInfo to its contract: the executor's at start,
// and keelgen's and keeltest's through lockfile.OfInfos.
func init() {
	lockfile.OfInfos = func(infos any) (lockfile.Lock, error) {
		list := slices.SortedFunc(slices.Values(infos.([]ToolInfo)), func(a, b ToolInfo) int { return strings.Compare(a.Name, b.Name) })
		contracts := make([]lockfile.Contract, len(list))
		for i, info := range list {
			contracts[i] = contract(info)
		}
		return lockfile.New(contracts)
	}
}

// contract is info as the lock reads it.
func contract(info ToolInfo) lockfile.Contract {
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
