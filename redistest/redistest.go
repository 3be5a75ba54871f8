// Package redistest runs a real redis-server on a loopback port for tests:
// one process per test, with persistence on (append-only, fsync on every
// write) in the test's own directory, stopped when the test ends.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is one redis-server process.
type Server struct {
	Addr string
	dir  string
	cmd  *exec.Cmd
	// exited is closed when cmd has exited (its one Wait is start's).
	exited chan struct{}
	t      testing.TB
}

// Start runs redis-server on a free loopback port. Without the binary the
// test is skipped, except in CI (CI=true), where .ci/run installs it and
// its absence is a failure.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed; .ci/run installs the Debian package redis-server")
		}
		t.Skip("redis-server is not installed (Debian package redis-server); skipping the tests against a real Redis")
	}
	s := &Server{dir: t.TempDir(), t: t}
	t.Cleanup(s.Stop)
	// The port is free when picked and taken when the server binds it: in
	// between, a test running in parallel may start its own Redis there.
	// Then ours exits and theirs answers, so the answer must be ours.
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s.Addr = l.Addr().String()
		l.Close()
		if s.start() {
			return s
		}
		s.Kill()
	}
	t.Fatal("redis-server: five free ports were each taken by another server first")
	return nil
}

// start runs the server on s.Addr; false when another process answers
// there instead.
func (s *Server) start() bool {
	s.t.Helper()
	_, port, _ := net.SplitHostPort(s.Addr)
	s.cmd = exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--dir", s.dir,
		"--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no", "--protected-mode", "yes")
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	// A server that cannot bind the port (another process took it first)
	// exits at once: then the port is not ours, whoever answers there.
	exited := make(chan struct{})
	s.exited = exited
	go func(cmd *exec.Cmd) {
		cmd.Wait()
		close(exited)
	}(s.cmd)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			return false
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		info, err := c.Info(ctx, "server").Result()
		cancel()
		if err == nil {
			return strings.Contains(info, "process_id:"+strconv.Itoa(s.cmd.Process.Pid)+"\r\n")
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server on %s did not answer: %v", s.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill ends the process at once (SIGKILL): nothing is flushed that was not
// already on disk.
func (s *Server) Kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.exited
		s.cmd = nil
	}
}

// Pause stops the process (SIGSTOP): it holds its connections and answers
// nothing until Resume.
func (s *Server) Pause() { s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume lets a paused process go on (SIGCONT).
func (s *Server) Resume() { s.cmd.Process.Signal(syscall.SIGCONT) }

// Restart starts the server again on the same port and directory.
func (s *Server) Restart() {
	if !s.start() {
		s.t.Fatalf("redis-server: another process took %s while this one was down", s.Addr)
	}
}

// RestartEmpty kills the server and starts it again on the same port
// with nothing it held: a Redis without persistence, or one whose disk
// was lost. What keel promises then is in SECURITY.md.
func (s *Server) RestartEmpty() {
	s.Kill()
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(s.dir, e.Name()))
	}
	s.Restart()
}

// Stop ends the server.
func (s *Server) Stop() { s.Kill() }

// Client is a client of the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	s.t.Cleanup(func() { c.Close() })
	return c
}

func (s *Server) String() string { return fmt.Sprintf("redis-server at %s", s.Addr) }

// Impostor listens on a loopback port as a Redis that is not one: it
// accepts every connection and writes reply to it, then closes it, or,
// for a nil reply, holds it open and says nothing. It returns the address;
// it stops when the test ends.
func Impostor(t testing.TB, reply []byte) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if reply == nil {
				held = append(held, c)
				continue
			}
			c.Write(reply)
			c.Close()
		}
	}()
	return l.Addr().String()
}
