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
	h            *handler
	max, perUser int
	lifetime     time.Duration
	idle         time.Duration // a session that receives no POST this long closes
	log          *slog.Logger

	mu       sync.Mutex
	sessions map[string]sessionInfo // session id → who opened it, and when
	// Slots taken by requests that may open a session and have not yet
	// answered: counted with the live ones, so a burst cannot pass the caps
	// between the check and the session's opening.
	pending   int
	pendingBy map[string]int
}

type sessionInfo struct {
	principal string
	opened    time.Time
	*activity
}

// activity is a live session as keel answers its calls: the SDK's
// session, and its idle timer. keel keeps the timer, not the SDK: the SDK
// counts only the POSTs it reads, and keel answers a session's calls
// itself.
type activity struct {
	ss    *mcp.ServerSession
	mu    sync.Mutex
	refs  int // POSTs in flight
	timer *time.Timer
}

// session is the live session id names, with the principal that opened
// it; nil for one keel does not know (the SDK answers it: 404).
func (c *sessionCap) session(id string) (*activity, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sessions[id]
	if !ok || s.activity == nil || time.Since(s.opened) >= c.lifetime {
		return nil, ""
	}
	return s.activity, s.principal
}

// begin marks a POST of session id in flight, its idle timer stopped;
// the returned func ends it.
func (c *sessionCap) begin(id string) func() {
	a, _ := c.session(id)
	if a == nil {
		return func() {}
	}
	a.mu.Lock()
	if a.refs++; a.refs == 1 {
		a.timer.Stop()
	}
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.refs--; a.refs == 0 {
			a.timer.Reset(c.idle)
		}
	}
}

func (c *sessionCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if id != "" {
		if c.expired(id) {
			// The client opens a new session, which counts against the caps.
			http.Error(w, "Not Found", http.StatusNotFound)
			return
		}
		if r.Method == http.MethodPost {
			defer c.begin(id)()
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
	live, mine, ok := c.reserve(principal, known)
	if !ok {
		c.log.LogAttrs(r.Context(), slog.LevelWarn, "keel: session cap reached; new session refused",
			slog.Int("live", live), slog.Int("principal_live", mine), slog.Bool("principal_cap", mine >= c.perUser))
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	rec := &sessionRecorder{ResponseWriter: w, c: c, principal: principal}
	defer rec.done() // a request that answered nothing frees its slot here
	c.next.ServeHTTP(rec, r)
}

// reserve takes a slot for a request that may open a session, when the
// live and pending sessions, all of them and principal's (when known), are
// under their caps: checked and taken under one lock.
func (c *sessionCap) reserve(principal string, known bool) (live, mine int, ok bool) {
	since := time.Now()
	held := map[string]*mcp.ServerSession{}
	for ss := range c.server.Sessions() {
		held[ss.ID()] = ss
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	recorded, mine := c.count(held, since, principal)
	// A session the server holds but keel has not recorded is one a
	// pending request is opening: counted once, with the pending.
	live = max(len(held), recorded+c.pending)
	mine += c.pendingBy[principal]
	if live >= c.max || (known && mine >= c.perUser) {
		return live, mine, false
	}
	if c.pendingBy == nil {
		c.pendingBy = map[string]int{}
	}
	c.pending++
	c.pendingBy[principal]++
	return live, mine, true
}

// unreserve gives back a slot reserve took; c.mu is held.
func (c *sessionCap) unreserve(principal string) {
	c.pending--
	if c.pendingBy[principal]--; c.pendingBy[principal] == 0 {
		delete(c.pendingBy, principal)
	}
}

// count drops what the server no longer holds and closes sessions past
// their lifetime, then counts the recorded sessions, and those of
// principal; c.mu is held. held is the server's sessions as listed from
// since on, before c.mu was taken: a session recorded after since may be
// missing from it, and is counted, not dropped (dropping it let a burst
// past the caps, and the session past its lifetime). A session is in the
// server's list before its response is written, so one recorded before
// since and missing from held has closed.
func (c *sessionCap) count(held map[string]*mcp.ServerSession, since time.Time, principal string) (recorded, mine int) {
	now := time.Now()
	for id, s := range c.sessions {
		ss, ok := held[id]
		switch {
		case !ok && s.opened.Before(since):
			c.drop(id, s)
		case ok && now.Sub(s.opened) >= c.lifetime:
			c.drop(id, s)
			delete(held, id)
			go ss.Close()
		default:
			recorded++
			if s.principal == principal {
				mine++
			}
		}
	}
	return recorded, mine
}

// expired reports whether session id has lived past the lifetime, and then
// closes it.
func (c *sessionCap) expired(id string) bool {
	c.mu.Lock()
	s, ok := c.sessions[id]
	old := ok && time.Since(s.opened) >= c.lifetime
	if old {
		c.drop(id, s)
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

// forgetWhenClosed drops session id once the SDK closed it (idle, past
// its lifetime, a DELETE), so keel answers none of its calls after.
func (c *sessionCap) forgetWhenClosed(id string, a *activity) {
	a.ss.Wait()
	c.mu.Lock()
	if s, ok := c.sessions[id]; ok && s.activity == a {
		c.drop(id, s)
	}
	c.mu.Unlock()
	if c.h != nil {
		c.h.taint.forget(id) // outside the lock: a shared store may be slow
	}
}

// drop forgets session id; c.mu is held.
func (c *sessionCap) drop(id string, s sessionInfo) {
	delete(c.sessions, id)
	if s.activity != nil {
		s.timer.Stop()
	}
	if c.h != nil {
		c.h.levels.Delete(id)
	}
}

// sessionRecorder notes the session a response opens, and its principal,
// moving its reserved slot to the session.
type sessionRecorder struct {
	http.ResponseWriter
	c         *sessionCap
	principal string
	noted     bool
	ended     *activity // the session it opened, whose idle clock starts when the POST ends
}

// done ends the opening POST.
func (s *sessionRecorder) done() {
	s.note()
	if a := s.ended; a != nil {
		a.mu.Lock()
		if a.refs--; a.refs == 0 {
			a.timer.Reset(s.c.idle)
		}
		a.mu.Unlock()
	}
}

func (s *sessionRecorder) note() {
	if s.noted {
		return
	}
	s.noted = true
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	s.c.unreserve(s.principal)
	if id := s.Header().Get("Mcp-Session-Id"); id != "" {
		if s.c.sessions == nil {
			s.c.sessions = map[string]sessionInfo{}
		}
		info := sessionInfo{principal: s.principal, opened: time.Now()}
		for ss := range s.c.server.Sessions() { // the SDK lists a session before its response is written
			if ss.ID() == id {
				a := &activity{ss: ss, timer: time.AfterFunc(s.c.idle, func() { ss.Close() }), refs: 1}
				a.timer.Stop() // its opening POST is in flight: the clock starts when it ends
				info.activity, s.ended = a, a
				go s.c.forgetWhenClosed(id, a)
			}
		}
		s.c.sessions[id] = info
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
