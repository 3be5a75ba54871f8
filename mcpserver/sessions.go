package mcpserver

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionCap guards the sessions of a stateful server: a request that
// would open a session past the global cap, or past its principal's, gets
// 503 and opens nothing; a session older than the maximum lifetime is
// closed, however busy, so no one can keep slots alive for ever. The
// principal is the verified token's UserID; without a Verifier no client
// is told apart, and the global cap alone applies.
type sessionCap struct {
	next         http.Handler
	server       *mcp.Server
	max, perUser int
	lifetime     time.Duration
	log          *slog.Logger

	mu       sync.Mutex
	sessions map[string]sessionInfo // session id → who opened it, and when
}

type sessionInfo struct {
	principal string
	opened    time.Time
}

func (c *sessionCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if id != "" {
		if c.expired(id) {
			// The client opens a new session, which counts against the caps.
			http.Error(w, "Not Found", http.StatusNotFound)
			return
		}
		c.next.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		c.next.ServeHTTP(w, r)
		return
	}
	principal, known := "", false
	if tok := auth.TokenInfoFromContext(r.Context()); tok != nil {
		principal, known = tok.UserID, true
	}
	live, mine := c.count(principal)
	if live >= c.max || (known && mine >= c.perUser) {
		c.log.LogAttrs(r.Context(), slog.LevelWarn, "keel: session cap reached; new session refused",
			slog.Int("live", live), slog.Int("principal_live", mine), slog.Bool("principal_cap", mine >= c.perUser))
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	c.next.ServeHTTP(&sessionRecorder{ResponseWriter: w, c: c, principal: principal}, r)
}

// count drops what the server no longer holds and closes sessions past
// their lifetime, then counts the live sessions, and those of principal.
func (c *sessionCap) count(principal string) (live, mine int) {
	held := map[string]*mcp.ServerSession{}
	for ss := range c.server.Sessions() {
		held[ss.ID()] = ss
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, s := range c.sessions {
		ss, ok := held[id]
		switch {
		case !ok:
			delete(c.sessions, id)
		case now.Sub(s.opened) >= c.lifetime:
			delete(c.sessions, id)
			delete(held, id)
			go ss.Close()
		case s.principal == principal:
			mine++
		}
	}
	return len(held), mine
}

// expired reports whether session id has lived past the lifetime, and then
// closes it.
func (c *sessionCap) expired(id string) bool {
	c.mu.Lock()
	s, ok := c.sessions[id]
	old := ok && time.Since(s.opened) >= c.lifetime
	if old {
		delete(c.sessions, id)
	}
	c.mu.Unlock()
	if !old {
		return false
	}
	for ss := range c.server.Sessions() {
		if ss.ID() == id {
			ss.Close()
		}
	}
	return true
}

// sessionRecorder notes the session a response opens, and its principal.
type sessionRecorder struct {
	http.ResponseWriter
	c         *sessionCap
	principal string
	noted     bool
}

func (s *sessionRecorder) note() {
	if s.noted {
		return
	}
	s.noted = true
	if id := s.Header().Get("Mcp-Session-Id"); id != "" {
		s.c.mu.Lock()
		if s.c.sessions == nil {
			s.c.sessions = map[string]sessionInfo{}
		}
		s.c.sessions[id] = sessionInfo{principal: s.principal, opened: time.Now()}
		s.c.mu.Unlock()
	}
}

func (s *sessionRecorder) WriteHeader(code int) {
	s.note()
	s.ResponseWriter.WriteHeader(code)
}

func (s *sessionRecorder) Write(b []byte) (int, error) {
	s.note()
	return s.ResponseWriter.Write(b)
}

func (s *sessionRecorder) Flush() {
	s.note()
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
