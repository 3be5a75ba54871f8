package mcpserver

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The server's sessions are listed before the cap's lock is taken, so a
// session recorded since may be missing from the list: it is counted, not
// dropped. Dropped, it counted against no cap again (a burst of 48 from one
// principal opened 21 sessions against a cap of 16, under -race in CI) and
// outlived the maximum lifetime. One recorded before the list and missing
// from it has closed, and is dropped.
func TestCountKeepsSessionsNewerThanTheList(t *testing.T) {
	since := time.Now()
	c := &sessionCap{lifetime: time.Hour, sessions: map[string]sessionInfo{
		"closed": {principal: "mallory", opened: since.Add(-time.Second)},
		"new":    {principal: "mallory", opened: since.Add(time.Millisecond)},
		"other":  {principal: "alice", opened: since.Add(time.Millisecond)},
	}}
	recorded, mine := c.count(map[string]*mcp.ServerSession{}, since, "mallory")
	if recorded != 2 || mine != 1 {
		t.Fatalf("counted %d sessions, %d of mallory's; want 2 and 1", recorded, mine)
	}
	if _, ok := c.sessions["new"]; !ok {
		t.Fatal("a session newer than the list was dropped")
	}
	if _, ok := c.sessions["closed"]; ok {
		t.Fatal("a closed session is still recorded")
	}
}
