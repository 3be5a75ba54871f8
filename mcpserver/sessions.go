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
//
// Opening, counting and closing a session walk no other: keel counts the
// live sessions by principal as it records and forgets them, and each
// session's clock (its idle timeout or its lifetime's end, whichever is
// first) is a timer, not a goroutine. keel
// closes every session the SDK holds but for a client's DELETE, which it
// sees pass (ServeHTTP).
type sessionCap struct {
	next         http.Handler
	h            *handler
	max, perUser int
	lifetime     time.Duration
	idle         time.Duration // a session that receives no POST this long closes
	log          *slog.Logger

	mu          sync.Mutex
	sessions    map[string]sessionInfo // session id → who opened it, and when
	byPrincipal map[string]int         // live sessions by principal
	// Slots taken by requests that may open a session and have not yet
	// answered: counted with the live ones, so a burst cannot pass the caps
	// between the check and the session's opening.
	pending   int
	pendingBy map[string]int
}

type sessionInfo struct {
	principal string
	opened    time.Time
	*activity // nil until the SDK's session is known (note, done)
}

// activity is a live session as keel answers its calls: the SDK's
// session, and its clocks. keel keeps them, not the SDK: the SDK counts
// only the POSTs it reads, and keel answers a session's calls itself.
type activity struct {
	ss      *mcp.ServerSession
	ends    time.Time // the session's lifetime ends
	mu      sync.Mutex
	refs    int         // POSTs in flight
	timer   *time.Timer // at the idle timeout or the lifetime's end, whichever is first; stopped while a POST is in flight
	closing bool        // its clock ran out: no POST begins
}

// rest starts a's clock once no POST is in flight; a.mu is held. A
// session past its lifetime while busy closes here, when its last POST
// ends (and its next request finds it expired before that).
func (a *activity) rest(idle time.Duration) {
	a.timer.Reset(min(idle, time.Until(a.ends)))
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

// begin marks a POST of session id in flight, its clock stopped; end ends
// it. gone: the session's clock ran out as the POST came, and it closes.
func (c *sessionCap) begin(id string) (end func(), gone bool) {
	a, _ := c.session(id)
	if a == nil {
		return func() {}, false
	}
	a.mu.Lock()
	if a.closing {
		a.mu.Unlock()
		return func() {}, true
	}
	if a.refs++; a.refs == 1 {
		a.timer.Stop()
	}
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.refs--; a.refs == 0 {
			a.rest(c.idle)
		}
	}, false
}

// timeUp closes a session whose clock ran out, unless a POST began as it
// did: that POST's end sets the clock again. A session is never closed
// under a POST that passed its checks.
func (c *sessionCap) timeUp(id string, a *activity) {
	a.mu.Lock()
	if a.refs > 0 {
		a.mu.Unlock()
		return
	}
	a.closing = true
	a.mu.Unlock()
	c.closeSession(id, a)
}

func (c *sessionCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	switch {
	case id != "" && r.Method == http.MethodPost:
		end, gone := c.begin(id) // first: its clock does not close the session under it
		defer end()
		if gone || c.expired(id) {
			// The client opens a new session, which counts against the caps.
			http.Error(w, "Not Found", http.StatusNotFound)
			return
		}
		c.next.ServeHTTP(w, r)
	case id != "" && c.expired(id):
		http.Error(w, "Not Found", http.StatusNotFound)
	case id != "" && r.Method == http.MethodDelete:
		c.delete(w, r, id)
	case id == "" && r.Method == http.MethodPost:
		c.open(w, r)
	default:
		// A GET stream's goroutine waits under this frame for the
		// session's life: it stays small.
		c.next.ServeHTTP(w, r)
	}
}

// delete passes a client's DELETE to the SDK, which closes the session
// it holds and answers 2xx; keel forgets it then (not for a refused
// DELETE: another client's, an unknown id).
func (c *sessionCap) delete(w http.ResponseWriter, r *http.Request, id string) {
	rec := &statusRecorder{ResponseWriter: w}
	c.next.ServeHTTP(rec, r)
	if rec.status/100 == 2 {
		c.closeSession(id, nil)
	}
}

// open serves a POST without a session, which may open one.
func (c *sessionCap) open(w http.ResponseWriter, r *http.Request) {
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
	c.mu.Lock()
	defer c.mu.Unlock()
	live = len(c.sessions) + c.pending
	mine = c.byPrincipal[principal] + c.pendingBy[principal]
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

// expired reports whether session id has lived past the lifetime, and then
// closes it.
func (c *sessionCap) expired(id string) bool {
	c.mu.Lock()
	s, ok := c.sessions[id]
	old := ok && time.Since(s.opened) >= c.lifetime
	c.mu.Unlock()
	if old {
		c.closeSession(id, s.activity)
	}
	return old
}

// closeSession forgets session id (when a is the one recorded, or a is
// nil) and closes the SDK's session: its idle time or lifetime ran out, or
// its client deleted it.
func (c *sessionCap) closeSession(id string, a *activity) {
	c.mu.Lock()
	s, ok := c.sessions[id]
	mine := ok && (a == nil || s.activity == a)
	if mine {
		c.drop(id, s)
	}
	c.mu.Unlock()
	if !mine {
		return
	}
	if s.activity != nil {
		s.ss.Close()
	}
	if c.h != nil {
		c.h.taint.forget(id) // outside the lock: a shared store may be slow
	}
}

// drop forgets session id; c.mu is held.
func (c *sessionCap) drop(id string, s sessionInfo) {
	delete(c.sessions, id)
	if c.byPrincipal[s.principal]--; c.byPrincipal[s.principal] <= 0 {
		delete(c.byPrincipal, s.principal)
	}
	if s.activity != nil {
		s.timer.Stop()
	}
	if c.h != nil {
		c.h.levels.Delete(id)
	}
}

// watch starts the session's clock, stopped while its opening POST is in
// flight; c.mu is held.
func (c *sessionCap) watch(id string, ss *mcp.ServerSession, opened time.Time) *activity {
	a := &activity{ss: ss, ends: opened.Add(c.lifetime), refs: 1}
	a.timer = time.AfterFunc(c.idle, func() { c.timeUp(id, a) })
	a.timer.Stop()
	return a
}

// statusRecorder keeps the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// sessionRecorder notes the session a response opens, and its principal,
// moving its reserved slot to the session.
type sessionRecorder struct {
	http.ResponseWriter
	c         *sessionCap
	principal string
	noted     bool
	id        string    // the session it opened
	ended     *activity // and its clocks: the idle one starts when the POST ends
}

// done ends the opening POST.
func (s *sessionRecorder) done() {
	s.note()
	if s.ended == nil && s.id != "" {
		s.attach() // the SDK's session, once its initialize was answered
		if s.ended == nil {
			s.c.closeSession(s.id, nil) // no initialize reached the SDK: nothing to keep, nor to count
		}
	}
	if a := s.ended; a != nil {
		a.mu.Lock()
		if a.refs--; a.refs == 0 {
			a.rest(s.c.idle)
		}
		a.mu.Unlock()
	}
}

// note records the session the response opens, as soon as its header is
// written (a client may send its next request before this one ends),
// moving its reserved slot to the session.
func (s *sessionRecorder) note() {
	if s.noted {
		return
	}
	s.noted = true
	c := s.c
	c.mu.Lock()
	c.unreserve(s.principal)
	if s.id = s.Header().Get("Mcp-Session-Id"); s.id != "" {
		if c.sessions == nil {
			c.sessions, c.byPrincipal = map[string]sessionInfo{}, map[string]int{}
		}
		c.sessions[s.id] = sessionInfo{principal: s.principal, opened: time.Now()}
		c.byPrincipal[s.principal]++
	}
	c.mu.Unlock()
	if s.id != "" {
		s.attach()
	}
}

// attach gives the recorded session the SDK's, which New's middleware
// kept when it answered the session's initialize (handler.opening).
func (s *sessionRecorder) attach() {
	c := s.c
	if c.h == nil {
		return
	}
	v, ok := c.h.opening.LoadAndDelete(s.id)
	if !ok {
		return // not yet answered (done tries again), or no initialize
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	info, ok := c.sessions[s.id]
	if !ok || info.activity != nil {
		return
	}
	info.activity = c.watch(s.id, v.(*mcp.ServerSession), info.opened)
	c.sessions[s.id] = info
	s.ended = info.activity
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
