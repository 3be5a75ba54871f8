package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/runtime"
)

// TaintStore remembers which conversations received text from outside:
// a result of a tool whose output marks members x-keel-untrusted. keel
// reads it before each call (ExecutionContext.Tainted, which
// runtime.SideEffectPolicy's ApproveAfterUntrusted and Cedar's
// context.tainted read) and marks it after such a result. Replicas share
// one (redisreplay.Store is one); the default is this process's memory.
type TaintStore interface {
	// Taint marks conversation for ttl.
	Taint(ctx context.Context, conversation string, ttl time.Duration) error
	// Tainted reports whether conversation is marked. An error is read
	// as marked: a write then waits for a person.
	Tainted(ctx context.Context, conversation string) (bool, error)
	// Forget drops conversation's mark (its session closed).
	Forget(ctx context.Context, conversation string) error
}

// DefaultTaintTTL is how long a conversation stays marked when its session
// does not close first (Options.TaintTTL).
const DefaultTaintTTL = time.Hour

// MetaConversation is the member of a tools/call's _meta where a client of
// a server without sessions names its conversation, so that text from
// outside marks that conversation alone; without it, a stateless call's
// conversation is its caller (tenant and principal).
const MetaConversation = "io.keelgen/conversation"

// taint is a server's tracking of text from outside, per conversation;
// nil when no tool of its set returns any.
type taint struct {
	store TaintStore
	ttl   time.Duration
	stdio string // the conversation of this process's stdio connection
	log   *slog.Logger
}

func newTaint(exec *runtime.Executor, opts Options) *taint {
	untrusted := false
	for _, t := range exec.ToolSet().Tools() {
		untrusted = untrusted || t.Info().HasUntrustedOutput()
	}
	if !untrusted {
		return nil // no call can bring text from outside: nothing to track, nothing to pay
	}
	t := &taint{store: opts.Taint, ttl: opts.TaintTTL, log: opts.Logger}
	if t.store == nil {
		t.store = newTaintMemory()
	}
	if t.ttl <= 0 {
		t.ttl = DefaultTaintTTL
	}
	var id [16]byte
	rand.Read(id[:])
	t.stdio = "p" + hex.EncodeToString(id[:])
	return t
}

// conversation is the key of the conversation req belongs to: its
// session's, this process's stdio connection's, or, stateless, the one its
// client names, else its caller's; parts that a caller chooses are
// length-prefixed.
func (t *taint) conversation(req *mcp.CallToolRequest, ec runtime.ExecutionContext) string {
	if req.Session != nil {
		if id := req.Session.ID(); id != "" {
			return sessionTaint(id)
		}
		return t.stdio
	}
	if req.Extra != nil {
		if id := req.Extra.Header.Get("Mcp-Session-Id"); id != "" {
			return sessionTaint(id)
		}
	}
	caller := lengthPrefixed(ec.Tenant) + lengthPrefixed(ec.Principal)
	if req.Params != nil {
		if c, ok := req.Params.Meta[MetaConversation].(string); ok && c != "" && len(c) <= maxCallIDBytes {
			return "c" + caller + lengthPrefixed(c)
		}
	}
	return "u" + caller
}

func sessionTaint(id string) string { return "s" + id }

func lengthPrefixed(s string) string { return strconv.Itoa(len(s)) + ":" + s }

// read gives ec the conversation's mark, unless the server owner's
// Context gave one: the conversation keel tracks ("" for none) and whether
// it was marked before the call, for note.
func (t *taint) read(ctx context.Context, req *mcp.CallToolRequest, ec *runtime.ExecutionContext) (conversation string, was bool) {
	if t == nil || ec.Tainted != nil {
		return "", false
	}
	conversation = t.conversation(req, *ec)
	marked, err := t.store.Tainted(ctx, conversation)
	if err != nil {
		t.log.LogAttrs(ctx, slog.LevelWarn, "keel: the taint store could not be read; the conversation is taken as tainted", slog.Any("error", err))
		marked = true
	}
	ec.Tainted = new(atomic.Bool)
	ec.Tainted.Store(marked)
	return conversation, marked
}

// note records that the call's result marked its conversation.
func (t *taint) note(ctx context.Context, conversation string, was bool, ec runtime.ExecutionContext) {
	if conversation == "" || was || !ec.Tainted.Load() {
		return
	}
	if err := t.store.Taint(context.WithoutCancel(ctx), conversation, t.ttl); err != nil {
		t.log.LogAttrs(ctx, slog.LevelError, "keel: a conversation that received text from outside could not be marked", slog.Any("error", err))
	}
}

// forget drops a closed session's mark.
func (t *taint) forget(id string) {
	if t == nil {
		return
	}
	if err := t.store.Forget(context.Background(), sessionTaint(id)); err != nil {
		t.log.LogAttrs(context.Background(), slog.LevelWarn, "keel: a closed session's taint could not be dropped; it expires", slog.Any("error", err))
	}
}

// taintMemory is a TaintStore in this process's memory, of at most
// maxTaint marks; full of unexpired ones, it reads every conversation as
// marked until some expire: a mark it cannot keep is never a mark lost.
type taintMemory struct {
	mu    sync.Mutex
	marks map[string]time.Time // conversation → when its mark expires
	full  bool
}

const maxTaint = 1 << 16

func newTaintMemory() *taintMemory { return &taintMemory{marks: map[string]time.Time{}} }

func (m *taintMemory) Taint(_ context.Context, conversation string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if _, held := m.marks[conversation]; !held && len(m.marks) >= maxTaint {
		m.sweep(now)
		if m.full = len(m.marks) >= maxTaint; m.full {
			return nil
		}
	}
	m.marks[conversation] = now.Add(ttl)
	return nil
}

func (m *taintMemory) Tainted(_ context.Context, conversation string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if m.full {
		m.sweep(now)
		m.full = len(m.marks) >= maxTaint
	}
	expires, ok := m.marks[conversation]
	return m.full || ok && now.Before(expires), nil
}

func (m *taintMemory) Forget(_ context.Context, conversation string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.marks, conversation)
	return nil
}

func (m *taintMemory) sweep(now time.Time) {
	for c, expires := range m.marks {
		if !now.Before(expires) {
			delete(m.marks, c)
		}
	}
}
