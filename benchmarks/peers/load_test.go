package peers_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver"
)

// serveEnv, when set to "<server>/<mode>", makes the test binary an HTTP
// server of that peer (serveAlone): BenchmarkHTTPLoad runs each server in
// a process of its own, so the CPU it reads is the server's alone, not the
// clients'.
const serveEnv = "KEEL_PEERS_SERVE"

func TestMain(m *testing.M) {
	if spec := os.Getenv(serveEnv); spec != "" {
		if err := serveAlone(spec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// Modes of BenchmarkHTTPLoad: the go-sdk client opens a session of the
// 2025-11-25 revision, or speaks 2026-07-28, which has none (each server's
// stateless handler, keel's and mcp-go's default one).
const (
	modeSession     = "session"
	modeSessionless = "sessionless"
	// modeIdle: sessions, with keel's caps raised for BenchmarkIdleSessions.
	modeIdle = "idle"
)

// loadServers are the peers BenchmarkHTTPLoad runs.
var loadServers = []string{"keel", "mcp-go", "sdk-typed", "sdk-raw", "floor"}

// loadHandler is server's HTTP handler for mode.
func loadHandler(server, mode string) (http.Handler, error) {
	stateless := mode == modeSessionless
	sdk := func(s *mcp.Server) http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	}
	switch server {
	case "keel":
		opts := mcpserver.HTTPOptions{Logger: slog.New(slog.DiscardHandler)}
		if mode == modeIdle {
			opts.MaxSessions = 1 << 20
		}
		return mcpserver.HTTPHandler(keelServer(&testing.T{}), opts)
	case "mcp-go":
		return mcpgoserver.NewStreamableHTTPServer(mcpgoServer()), nil
	case "sdk-typed":
		return sdk(typedServer()), nil
	case "sdk-raw":
		return sdk(rawServer()), nil
	case "floor":
		return floorHTTP(), nil
	}
	return nil, fmt.Errorf("no server %q", server)
}

// modeStdio: the server reads its standard input and writes its standard
// output, in its own stdio framing (BenchmarkStdioServer).
const modeStdio = "stdio"

// serveAlone serves spec on a loopback port, printing its URL, until its
// standard input closes; in modeStdio, it serves its standard input.
func serveAlone(spec string) error {
	server, mode, _ := strings.Cut(spec, "/")
	if mode == modeStdio {
		for _, p := range peers(&testing.T{}) {
			if p.name == server {
				p.serve(context.Background(), os.Stdin, os.Stdout)
				return nil
			}
		}
		return fmt.Errorf("no server %q", server)
	}
	h, err := loadHandler(server, mode)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("listening http://%s\n", ln.Addr())
	go http.Serve(ln, h)
	// Until its input closes, each line "gc" collects garbage and returns
	// what it can to the kernel, then answers, so that the RSS read next
	// is the live memory (BenchmarkIdleSessions).
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		if lines.Text() == "gc" {
			debug.FreeOSMemory()
			fmt.Println("collected")
		}
	}
	return nil
}

// loadServer is a server process BenchmarkHTTPLoad started.
type loadServer struct {
	cmd *exec.Cmd
	in  io.Closer
	out *bufio.Reader
	url string
}

// startProcess runs the test binary again as the server of spec
// (serveAlone), its standard input and output piped to the caller.
func startProcess(b *testing.B, spec string) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"="+spec, "GOMAXPROCS="+strconv.Itoa(max(1, runtimeProcs())))
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return cmd, in, out
}

func startServer(b *testing.B, spec string) *loadServer {
	cmd, in, out := startProcess(b, spec)
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening ") {
		b.Fatalf("%s: %q %v", spec, line, err)
	}
	return &loadServer{cmd: cmd, in: in, out: r, url: strings.TrimSpace(strings.TrimPrefix(line, "listening "))}
}

// rss is the server process's resident memory once it has collected its
// garbage (Linux: /proc).
func (s *loadServer) rss(b *testing.B) int64 {
	if _, err := io.WriteString(s.in.(io.Writer), "gc\n"); err != nil {
		b.Fatal(err)
	}
	if line, err := s.out.ReadString('\n'); err != nil || line != "collected\n" {
		b.Fatalf("the server answered %q %v", line, err)
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		b.Skip("no /proc: the server's memory is not read here")
	}
	for l := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kib << 10
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

func (s *loadServer) stop() {
	s.in.Close()
	s.cmd.Wait()
}

// cpu is the CPU time the server process has used (Linux: /proc).
func (s *loadServer) cpu(b *testing.B) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		b.Skip("no /proc: the server's CPU time is not read here")
	}
	fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// BenchmarkHTTPLoad: tools/call over loopback Streamable HTTP from 1, 8
// and 64 clients at once, each server in a process of its own (the test
// binary, started again), the go-sdk client driving every one on the same
// revision: a 2025-11-25 session, or 2026-07-28 without one. ns/op is the
// wall time per call at that load (1/throughput); server-µs/op is the CPU
// the server process spent per call, read from the kernel (10 ms ticks:
// run enough calls that they do not matter, -benchtime 3000x or more).
func BenchmarkHTTPLoad(b *testing.B) {
	for _, mode := range []string{modeSession, modeSessionless} {
		for _, server := range loadServers {
			b.Run(mode+"/"+server, func(b *testing.B) {
				srv := startServer(b, server+"/"+mode)
				defer srv.stop()
				for _, clients := range []int{1, 8, 64} {
					b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
						loadRun(b, srv, mode, clients)
					})
				}
			})
		}
	}
}

func loadRun(b *testing.B, srv *loadServer, mode string, clients int) {
	ctx := context.Background()
	httpClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * clients}} // a session holds a GET stream besides its calls
	var opts *mcp.ClientSessionOptions
	if mode == modeSession {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	}
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: srv.url, HTTPClient: httpClient}, opts)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		if got := cs.ID() != ""; got != (mode == modeSession) {
			b.Fatalf("the client has a session: %v, in mode %s", got, mode)
		}
		sessions[i] = cs
	}
	params := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"incident_id": "INC-001"}}
	call := func(cs *mcp.ClientSession) {
		if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
			b.Error(err, res)
		}
	}
	for _, cs := range sessions {
		call(cs) // warm: connections open, servers' first calls made
	}
	var next atomic.Int64
	n := int64(b.N)
	cpu0 := srv.cpu(b)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, cs := range sessions {
		wg.Go(func() {
			for next.Add(1) <= n {
				call(cs)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(srv.cpu(b)-cpu0)/float64(time.Microsecond)/float64(b.N), "server-µs/op")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
}

// BenchmarkStdioServer: tools/call round trips over stdio to each server
// in a process of its own (the test binary, started again), one go-sdk
// client on its standard input and output. server-µs/op is the CPU the
// server process spent per call, read from the kernel as in
// BenchmarkHTTPLoad (run 3000x or more): BenchmarkStdio's ns/op holds the
// client's work too, which is the same for every server.
func BenchmarkStdioServer(b *testing.B) {
	for _, server := range loadServers {
		b.Run(server, func(b *testing.B) {
			cmd, in, out := startProcess(b, server+"/"+modeStdio)
			srv := &loadServer{cmd: cmd, in: in}
			defer srv.stop()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
				&mcp.IOTransport{Reader: out, Writer: in}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"incident_id": "INC-001"}}
			if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError || res.StructuredContent == nil {
				b.Fatalf("%v %+v", err, res)
			}
			cpu0 := srv.cpu(b)
			b.ResetTimer()
			for range b.N {
				if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(srv.cpu(b)-cpu0)/float64(time.Microsecond)/float64(b.N), "server-µs/op")
		})
	}
}

func runtimeProcs() int { return goruntime.GOMAXPROCS(0) }
