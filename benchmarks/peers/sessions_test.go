package peers_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// idleServers are the peers BenchmarkIdleSessions runs.
var idleServers = []string{"keel", "sdk-raw", "mcp-go"}

// early is how many sessions open before the rest are timed apart.
const early = 1000

// BenchmarkIdleSessions opens b.N sessions of the 2025-11-25 revision one
// after another (initialize, then notifications/initialized), each server
// in a process of its own, and leaves them idle; with stream=true each also
// holds its GET stream open. ns/op is the time to open one; late/early is
// the mean time to open each session after the first 1,000 over the mean
// of the first 1,000 (1.0: opening does not slow as sessions add up);
// KiB/session is the server's resident memory per session, read from the
// kernel after the server collected its garbage. Run 5000x or 10000x.
func BenchmarkIdleSessions(b *testing.B) {
	for _, stream := range []bool{false, true} {
		for _, server := range idleServers {
			b.Run(fmt.Sprintf("stream=%v/%s", stream, server), func(b *testing.B) {
				srv := startServer(b, server+"/"+modeIdle)
				defer srv.stop()
				posts := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
				streams := &http.Transport{DisableKeepAlives: true}
				defer streams.CloseIdleConnections()
				openSession(b, posts, srv.url) // warm: the server's first session
				rss0 := srv.rss(b)
				took := make([]time.Duration, b.N)
				var held []io.Closer
				defer func() {
					for _, c := range held {
						c.Close()
					}
				}()
				b.ResetTimer()
				for i := range b.N {
					start := time.Now()
					id := openSession(b, posts, srv.url)
					took[i] = time.Since(start)
					if stream {
						held = append(held, openStream(b, streams, srv.url, id))
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(srv.rss(b)-rss0)/1024/float64(b.N), "KiB/session")
				if b.N > 2*early {
					b.ReportMetric(mean(took[early:])/mean(took[:early]), "late/early")
				}
			})
		}
	}
}

func mean(d []time.Duration) float64 {
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return float64(sum) / float64(len(d))
}

// openSession opens one session over POSTs and returns its id.
func openSession(b *testing.B, c *http.Client, url string) string {
	resp := post(b, c, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || id == "" || !strings.Contains(string(body), `"protocolVersion"`) {
		b.Fatalf("initialize: %d %q %s", resp.StatusCode, id, body)
	}
	resp = post(b, c, url, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		b.Fatalf("notifications/initialized: %d", resp.StatusCode)
	}
	return id
}

func post(b *testing.B, c *http.Client, url, session, body string) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	return resp
}

// openStream opens session's GET stream on a connection of its own and
// returns its body, held open until the benchmark ends.
func openStream(b *testing.B, t *http.Transport, url, session string) io.Closer {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := t.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("GET stream: %d", resp.StatusCode)
	}
	return resp.Body
}
