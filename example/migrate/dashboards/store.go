// Package dashboards is a small Grafana-like tool set as it reads after the
// move to keel: the same store and handler bodies the go-sdk and mcp-go
// servers in ../before call, now annotated for keelgen.
package dashboards

import (
	"strings"
	"sync"
)

// One dashboard of the store.
type Dashboard struct {
	// The dashboard's stable id.
	UID string `json:"uid"`
	// What people call it.
	Title string `json:"title"`
	// The folder it is filed in; none at the root.
	Folder string `json:"folder,omitempty"`
}

var (
	mu          sync.Mutex
	dashboards  = []Dashboard{{"api-latency", "API latency", "api"}, {"db-pool", "Database pool", ""}, {"api-errors", "API errors", "api"}}
	annotations = map[string][]string{}
	variables   = map[string]map[string]any{}
)

// Find returns the dashboards whose title contains query, at most limit
// (all when limit is 0).
func Find(query string, limit int) []Dashboard {
	out := []Dashboard{}
	for _, d := range dashboards {
		if strings.Contains(strings.ToLower(d.Title), strings.ToLower(query)) {
			out = append(out, d)
		}
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

// Annotate adds text to the dashboard uid; false when there is no such
// dashboard. It returns how many annotations the dashboard has.
func Annotate(uid, text string) (int, bool) {
	mu.Lock()
	defer mu.Unlock()
	for _, d := range dashboards {
		if d.UID == uid {
			annotations[uid] = append(annotations[uid], text)
			return len(annotations[uid]), true
		}
	}
	return 0, false
}

// File moves the dashboard uid into folder, or to the root when toRoot;
// false when there is no such dashboard. It returns the dashboard as filed.
func File(uid, folder string, toRoot bool) (Dashboard, bool) {
	mu.Lock()
	defer mu.Unlock()
	for i, d := range dashboards {
		if d.UID == uid {
			switch {
			case toRoot:
				dashboards[i].Folder = ""
			case folder != "":
				dashboards[i].Folder = folder
			}
			return dashboards[i], true
		}
	}
	return Dashboard{}, false
}

// SetVariable sets the dashboard uid's variable name to value (a string,
// a number or a bool); false when there is no such dashboard.
func SetVariable(uid, name string, value any) bool {
	mu.Lock()
	defer mu.Unlock()
	for _, d := range dashboards {
		if d.UID == uid {
			if variables[uid] == nil {
				variables[uid] = map[string]any{}
			}
			variables[uid][name] = value
			return true
		}
	}
	return false
}
