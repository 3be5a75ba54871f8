// Command incident-mcp serves the example's incident tools over the Model
// Context Protocol: on standard input and output by default, or over
// Streamable HTTP with -http.
//
//	go run ./example/cmd/incident-mcp                                         # stdio
//	go run ./example/cmd/incident-mcp -http 127.0.0.1:8080                    # HTTP on loopback
//	go run ./example/cmd/incident-mcp -http :8080 -tokens tokens.txt          # HTTP with bearer tokens
//	go run ./example/cmd/incident-mcp -http :8080 -tokens tokens.txt -stateless \
//	    -grant-key grant.key -redis 127.0.0.1:6379                            # one of several replicas
//
// Write tools (create_ticket) run only with -allow-side-effects, or with a
// person's grant when -grant-key is set: the server's owner decides that,
// never the client. Binding anything but a loopback address without
// -tokens is refused unless -insecure-no-auth says so.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/keelgen/keel/generated"
	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/redisreplay"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

type flags struct {
	addr, tokens, grantKey, redisAddr, origins string
	allow, stateless, insecure                 bool
	sessionTimeout                             time.Duration
	maxSessions                                int
}

func parse(args []string, stderr io.Writer) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("incident-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.addr, "http", "", "serve Streamable HTTP on `address` (host:port) instead of stdio")
	fs.BoolVar(&f.allow, "allow-side-effects", false, "let write tools run without approval (the execution context of every call)")
	fs.StringVar(&f.tokens, "tokens", "", "require bearer tokens listed in `file`, one per line: token principal tenant [group,group...]")
	fs.BoolVar(&f.insecure, "insecure-no-auth", false, "serve a non-loopback address without -tokens (anyone who can connect can call)")
	fs.BoolVar(&f.stateless, "stateless", false, "no sessions: every request stands alone, so any replica can serve it")
	fs.StringVar(&f.origins, "trusted-origins", "", "comma-separated browser `origins` allowed besides the server's own")
	fs.DurationVar(&f.sessionTimeout, "session-timeout", mcpserver.DefaultSessionTimeout, "close a session idle this `long`")
	fs.IntVar(&f.maxSessions, "max-sessions", mcpserver.DefaultMaxSessions, "refuse a new session past this `many` live ones")
	fs.StringVar(&f.grantKey, "grant-key", "", "take approval grants signed with the HMAC secret in `file` (32 bytes or more)")
	fs.StringVar(&f.redisAddr, "redis", "", "keep used grants and writes' outcomes in the Redis at `address` (shared by replicas) instead of in memory")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if f.addr != "" && f.tokens == "" && !f.insecure && !isLoopback(f.addr) {
		return f, fmt.Errorf("-http %s is not a loopback address: set -tokens, or -insecure-no-auth to serve it without authentication", f.addr)
	}
	return f, nil
}

func run(args []string, stderr io.Writer) int {
	f, err := parse(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "incident-mcp:", err)
		}
		return 2
	}
	// The protected log goes to stderr: stdout carries the protocol on stdio.
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	replay, outcomes, err := stores(f.redisAddr)
	if err != nil {
		fmt.Fprintln(stderr, "incident-mcp:", err)
		return 1
	}
	// A write sent again under its keel/call_id gets its first result.
	opts := []runtime.Option{runtime.WithLogger(logger), runtime.WithOutcomes(outcomes, 0)}
	if f.grantKey != "" {
		key, err := os.ReadFile(f.grantKey)
		if err != nil {
			fmt.Fprintln(stderr, "incident-mcp:", err)
			return 1
		}
		opts = append(opts, runtime.WithApprovals(grant.HMACKey(bytes.TrimSpace(key)), replay))
	}
	exec, err := generated.NewExecutor(opts...)
	if err != nil {
		fmt.Fprintln(stderr, "incident-mcp:", err)
		return 1
	}
	logger.Info("serving tools", "set_digest", exec.SetDigest(), "allow_side_effects", f.allow)
	// SIGTERM (a deployment's stop) and an interrupt drain the server
	// (Server.Shutdown): no new call starts, the running ones end.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.addr == "" {
		server := mcpserver.New(exec, mcpserver.Options{Name: "incident-tools", Context: fixedContext(f.allow)})
		serving, endServing := context.WithCancel(context.Background())
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			select {
			case <-ctx.Done():
				drain(server, logger)
				endServing()
			case <-serving.Done():
			}
		}()
		err := mcpserver.ServeStdio(serving, server)
		endServing()
		<-drained
		if err != nil && serving.Err() == nil {
			fmt.Fprintln(stderr, "incident-mcp:", err)
			return 1
		}
		return 0
	}
	if err := serveHTTP(ctx, f, exec, logger, stderr); err != nil {
		fmt.Fprintln(stderr, "incident-mcp:", err)
		return 1
	}
	return 0
}

// serveHTTP serves until ctx ends; it prints the address it listens on.
func serveHTTP(ctx context.Context, f flags, exec *runtime.Executor, logger *slog.Logger, stderr io.Writer) error {
	contextOf := fixedContext(f.allow)
	httpOpts := mcpserver.HTTPOptions{Stateless: f.stateless, SessionTimeout: f.sessionTimeout, MaxSessions: f.maxSessions, Logger: logger}
	if f.origins != "" {
		httpOpts.TrustedOrigins = strings.Split(f.origins, ",")
	}
	if f.tokens != "" {
		ids, err := readTokens(f.tokens)
		if err != nil {
			return err
		}
		httpOpts.Verifier = ids.verify
		contextOf = mcpserver.TokenContext(func(_ context.Context, tok *auth.TokenInfo) runtime.ExecutionContext {
			id := tok.Extra["identity"].(identity)
			return runtime.ExecutionContext{AllowSideEffects: f.allow, Principal: id.principal, Tenant: id.tenant, Groups: id.groups}
		})
	}
	server := mcpserver.New(exec, mcpserver.Options{Name: "incident-tools", Context: contextOf})
	h, err := mcpserver.HTTPHandler(server, httpOpts)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	stopped := make(chan struct{})
	go func() { // the calls first, refused with a wait while the listener still answers, then the connections
		defer close(stopped)
		<-ctx.Done()
		drain(server, logger)
		closing, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if srv.Shutdown(closing) != nil {
			srv.Close()
		}
	}()
	fmt.Fprintf(stderr, "incident-mcp: Streamable HTTP on http://%s/\n", l.Addr())
	if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
		return err
	}
	<-stopped
	return nil
}

// drainTimeout bounds a drain: a deployment's stop signal is followed by
// a kill, often 30 s later.
const drainTimeout = 25 * time.Second

// drain shuts server down: no new call, the running ones to their end.
func drain(server *mcpserver.Server, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	if err := server.Shutdown(ctx); err != nil {
		logger.Warn("the drain ended with calls still running", "error", err)
	}
}

// fixedContext is the execution context of a server without tokens: one
// principal for every call, writes as the owner's flag says.
func fixedContext(allow bool) mcpserver.ContextFunc {
	return func(context.Context, *mcp.CallToolRequest) runtime.ExecutionContext {
		return runtime.ExecutionContext{AllowSideEffects: allow, Principal: "mcp-client"}
	}
}

// stores are the grants' replay store and the writes' outcome store: this
// process's memory, or the Redis that -redis names, shared by replicas.
func stores(addr string) (runtime.ReplayStore, runtime.OutcomeStore, error) {
	if addr == "" {
		return memstore.NewReplayStore(), memstore.NewOutcomeStore(), nil
	}
	s, err := redisreplay.New(redis.NewClient(&redis.Options{Addr: addr}), redisreplay.Options{})
	if err != nil {
		return nil, nil, err
	}
	return s, s, nil
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// identity is who a bearer token speaks for.
type identity struct {
	principal, tenant string
	groups            []string
}

// tokens maps the SHA-256 of each token to its identity.
type tokens map[[sha256.Size]byte]identity

func readTokens(file string) (tokens, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	ids := tokens{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) < 3 || len(fields) > 4 || len(fields[0]) < 16 {
			return nil, fmt.Errorf("%s:%d: want: token (16 characters or more) principal tenant [group,group...]", file, n)
		}
		id := identity{principal: fields[1], tenant: fields[2]}
		if len(fields) == 4 {
			id.groups = strings.Split(fields[3], ",")
		}
		ids[sha256.Sum256([]byte(fields[0]))] = id
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s: no tokens", file)
	}
	return ids, nil
}

// verify accepts a listed token. Tokens are compared by their digests in
// constant time, so timing says nothing of how much of a guess was right.
func (ids tokens) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	sum := sha256.Sum256([]byte(token))
	for k, id := range ids {
		if subtle.ConstantTimeCompare(k[:], sum[:]) == 1 {
			// Static tokens do not expire; this verification holds for one request.
			return &auth.TokenInfo{UserID: id.principal, Expiration: time.Now().Add(time.Minute),
				Extra: map[string]any{"identity": id}}, nil
		}
	}
	return nil, auth.ErrInvalidToken
}
