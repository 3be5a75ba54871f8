package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The soak tests measure; they run only with KEEL_SOAK=1 (go test
// ./example/cmd/incident-mcp -run Soak -v), send traffic to loopback
// only, and stop by themselves.
func soak(t *testing.T) {
	if os.Getenv("KEEL_SOAK") != "1" {
		t.Skip("a measurement: set KEEL_SOAK=1")
	}
}

const lookupBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup_incident","arguments":{"incident_id":"INC-001"}}}`

func postJSON(client *http.Client, url, body string, header map[string]string) (int, http.Header, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header, nil
}

// TestSoakLoad: tools/call requests per second for 20 s against one
// stateless replica, then against two (round robin), from 8 clients.
func TestSoakLoad(t *testing.T) {
	soak(t)
	const duration, clients = 20 * time.Second, 8
	one := []string{startServer(t, "-http", "127.0.0.1:0", "-stateless")}
	two := append(one, startServer(t, "-http", "127.0.0.1:0", "-stateless"))
	for _, replicas := range [][]string{one, two} {
		var ok, failed atomic.Int64
		var wg sync.WaitGroup
		stop := time.Now().Add(duration)
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
				for i := c; time.Now().Before(stop); i++ {
					status, _, err := postJSON(client, replicas[i%len(replicas)], lookupBody, nil)
					if err != nil || status != http.StatusOK {
						failed.Add(1)
						continue
					}
					ok.Add(1)
				}
			}()
		}
		wg.Wait()
		t.Logf("%d replica(s): %.0f requests/s (%d ok, %d failed in %v)", len(replicas), float64(ok.Load())/duration.Seconds(), ok.Load(), failed.Load(), duration)
		if failed.Load() > 0 {
			t.Errorf("%d requests failed", failed.Load())
		}
	}
}

// TestSoakAbandonedSessions: RSS of the server before and after 10,000
// sessions that are opened and abandoned, and after the (shortened) idle
// timeout has closed them.
func TestSoakAbandonedSessions(t *testing.T) {
	soak(t)
	const sessions, timeout = 10000, 10 * time.Second
	url, pid := startServerProcess(t, "-http", "127.0.0.1:0", "-session-timeout", timeout.String(), "-max-sessions", fmt.Sprint(sessions+1))
	client := &http.Client{}
	open := func() string {
		var first string
		for i := range sessions {
			status, h, err := postJSON(client, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}`, nil)
			if err != nil || status != http.StatusOK {
				t.Fatalf("session %d: %v %d", i, err, status)
			}
			if i == 0 {
				first = h.Get("Mcp-Session-Id")
			}
		}
		return first
	}
	expired := func(id string) {
		time.Sleep(timeout + 5*time.Second)
		status, _, err := postJSON(client, url, lookupBody, map[string]string{"Mcp-Session-Id": id})
		if err != nil || status != http.StatusNotFound {
			t.Fatalf("the first session after the timeout: %v %d, want 404", err, status)
		}
	}
	before := rss(t, pid)
	first := open()
	opened := rss(t, pid)
	expired(first)
	closed := rss(t, pid)
	// A second wave reuses what the first one freed: Go keeps freed pages
	// for reuse and returns them to the system only gradually.
	first = open()
	again := rss(t, pid)
	expired(first)
	t.Logf("RSS: %d KiB before; %d KiB with %d abandoned sessions (+%d KiB, %.1f KiB each); %d KiB after the idle timeout closed them; %d KiB with a second wave of %d",
		before, opened, sessions, opened-before, float64(opened-before)/sessions, closed, again, sessions)
	if again > opened+opened/4 {
		t.Errorf("the second wave grew RSS from %d to %d KiB: sessions are not reclaimed", opened, again)
	}
}

// rss is a process's resident set size in KiB (Linux).
func rss(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kib int
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kib)
			return kib
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
