// Package branches returns go-github's own types as results, as
// github-mcp-server does: a library's struct, with its pointers,
// timestamps and open maps, checked and written by generated code.
package branches

//go:generate go tool keelgen -out generated

// github.Timestamp has UnmarshalJSON of its own (it also reads Unix
// seconds); it writes time.Time's RFC 3339 text, which is its JSON form
// in a result.
//
//keel:text github.com/google/go-github/v84/github.Timestamp format=date-time

import (
	"context"
	"time"

	"github.com/google/go-github/v84/github"
)

// BranchArgs name a branch.
type BranchArgs struct {
	// The repository, owner/name.
	Repo string `json:"repo" jsonschema:"minLength=3,maxLength=200"`
	// The branch.
	Branch string `json:"branch" jsonschema:"minLength=1,maxLength=255"`
}

// Gets a branch of a repository.
//
//keel:tool name=get_branch version=1.0 effect=read
func GetBranch(ctx context.Context, in BranchArgs) (*github.Branch, error) {
	return Branch(in.Repo, in.Branch), nil
}

// Branch is the branch as the GitHub API returns it, with a protection
// whose unset rules are nil (null, as GitHub writes them) and a commit
// whose tree holds entries go-github writes by its own MarshalJSON.
func Branch(repo, name string) *github.Branch {
	at := github.Timestamp{Time: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)}
	who := &github.CommitAuthor{Name: github.Ptr("Ada"), Email: github.Ptr("ada@example.com"), Date: &at}
	return &github.Branch{
		Name: github.Ptr(name),
		Commit: &github.RepositoryCommit{
			SHA: github.Ptr("6dcb09b5b57875f334f61aebed695e2e4193db5e"),
			Commit: &github.Commit{
				Message: github.Ptr("Fix all the bugs <for real> & more"),
				Author:  who, Committer: who,
				Tree: &github.Tree{SHA: github.Ptr("9fb037999f264ba9a7fc6274d15fa3ae2ab98312"),
					Entries: []*github.TreeEntry{{Path: github.Ptr("README.md"), Mode: github.Ptr("100644"), Type: github.Ptr("blob")}}},
			},
			Author: &github.User{Login: github.Ptr("ada"), ID: github.Ptr(int64(1)), CreatedAt: &at},
			Stats:  &github.CommitStats{Additions: github.Ptr(104), Deletions: github.Ptr(4), Total: github.Ptr(108)},
		},
		Protected:  github.Ptr(true),
		Protection: &github.Protection{EnforceAdmins: &github.AdminEnforcement{Enabled: true}},
	}
}
