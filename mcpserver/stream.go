package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/keelgen/keel/mcpserver/internal/front"
	"github.com/keelgen/keel/runtime/ask"
)

// The SDK answers every POST as an event stream. keel keeps that stream only
// for a tools/call that asked for progress (its request carries a
// progressToken), for subscriptions/listen (its acknowledgement is an event
// before its result), and for a call whose handler logs to a client that
// listens or that asks the client (from the first such message on),
// sanitizing each event as it passes and sending heartbeats while the call
// runs; every other answer is buffered, sanitized whole and sent as
// application/json, as before.

// DefaultHeartbeat is how often an open event stream carries a comment line
// when nothing else was written, so proxies and load balancers that drop
// idle connections keep it.
const DefaultHeartbeat = 15 * time.Second

// heartbeat is the comment line an idle stream carries; clients ignore it.
var heartbeat = []byte(": keepalive\n\n")

// postMode is what envelopeCheck learned of a POST's body, for the firewall
// that writes its answer.
type postMode struct {
	stream bool // a tools/call with a progress token, subscriptions/listen: answer as events
	batch  bool // a JSON array of messages: answer with an array
}

type postModeKey struct{}

func withPostMode(ctx context.Context, m *postMode) context.Context {
	return context.WithValue(ctx, postModeKey{}, m)
}

// notePostMode records, for the firewall, how body, whose message the
// front read (its method "" for a batch or a body it could not read), is
// to be answered: from the front's reading, never a second parse.
func notePostMode(ctx context.Context, body []byte, m *front.Message) {
	mode, _ := ctx.Value(postModeKey{}).(*postMode)
	if mode == nil {
		return
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	mode.batch = len(trimmed) > 0 && trimmed[0] == '['
	switch m.Method {
	case "subscriptions/listen":
		mode.stream = true // its acknowledgement comes first, as an event
	case "tools/call":
		for _, mm := range m.MetaMembers {
			if mm.Name == "progressToken" {
				token := mm.Value.Bytes(m.Raw)
				mode.stream = len(token) > 0 && string(token) != "null"
			}
		}
	}
}

// beat writes a heartbeat on an event stream whenever interval passes with
// nothing written, until stop. Its clock is a timer, not a goroutine: an
// idle stream holds none.
type beat struct {
	mu       *sync.Mutex
	w        http.ResponseWriter
	limit    *writeLimit
	interval time.Duration
	last     time.Time // of the last write, under mu
	stopped  bool      // under mu
	timer    *time.Timer
}

func startBeat(mu *sync.Mutex, w http.ResponseWriter, limit *writeLimit, interval time.Duration) *beat {
	b := &beat{mu: mu, w: w, limit: limit, interval: interval, last: time.Now()}
	b.timer = time.AfterFunc(interval, b.tick)
	return b
}

// tick writes a heartbeat when the stream has been quiet for an interval
// (less a tenth: the timer may fire a little early), and sets the timer
// for the next one.
func (b *beat) tick() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	now := time.Now()
	next := b.interval
	if quiet := now.Sub(b.last); quiet >= b.interval-b.interval/10 {
		b.limit.write(b.w, heartbeat)
		b.last = now
	} else {
		next = b.interval - quiet
	}
	b.timer.Reset(next)
}

// wrote records a write, under mu.
func (b *beat) wrote() {
	if b != nil {
		b.last = time.Now()
	}
}

// stop ends the heartbeats; no write follows its return (a tick waiting
// for mu finds them stopped). It may be called more than once.
func (b *beat) stop() {
	if b != nil {
		b.mu.Lock()
		b.stopped = true
		b.mu.Unlock()
		b.timer.Stop()
	}
}

// beating is a writer's lock, which its heartbeats take too, its
// heartbeats once started, and the bound on each of its writes.
type beating struct {
	mu    sync.Mutex
	beat  *beat
	limit writeLimit
}

// startBeat starts heartbeats on w, under mu.
func (b *beating) startBeat(w http.ResponseWriter, interval time.Duration) {
	b.beat = startBeat(&b.mu, w, &b.limit, interval)
}

// writeLimit bounds each write of an open stream
// (HTTPOptions.WriteEventTimeout): the connection must take it within
// timeout, or the stream is dropped: its request's context is cancelled
// (the call it carries ends), every later write fails, and the connection
// closes when the handler returns. A client that stops reading a stream
// holds nothing past the bound.
type writeLimit struct {
	timeout time.Duration
	drop    context.CancelFunc
	dropped bool
}

// errDropped is every write's error once a stream is dropped.
var errDropped = errors.New("mcpserver: the client did not read its event stream in time; dropped")

// write writes b to w and flushes it within the bound, under the writer's lock.
func (l *writeLimit) write(w http.ResponseWriter, b []byte) error {
	if l.dropped {
		return errDropped
	}
	l.arm(w)
	_, err := w.Write(b)
	if err == nil {
		err = http.NewResponseController(w).Flush()
	}
	return l.check(err)
}

// flush flushes w within the bound, under the writer's lock.
func (l *writeLimit) flush(w http.ResponseWriter) error {
	if l.dropped {
		return errDropped
	}
	l.arm(w)
	return l.check(http.NewResponseController(w).Flush())
}

func (l *writeLimit) arm(w http.ResponseWriter) {
	if l.timeout > 0 {
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(l.timeout))
	}
}

func (l *writeLimit) check(err error) error {
	if err != nil && !l.dropped {
		l.dropped = true
		if l.drop != nil {
			l.drop()
		}
	}
	return err
}

// stopBeat ends the heartbeats, if they started: before the handler
// returns, whichever way it returns.
func (b *beating) stopBeat() {
	b.mu.Lock()
	bt := b.beat
	b.mu.Unlock()
	bt.stop()
}

// postWriter takes the SDK's answer to one POST: an event stream it passes
// on event by event, sanitized, when the request asked for one; anything
// else it holds until the handler returns.
type postWriter struct {
	w    http.ResponseWriter
	mode *postMode
	fw   firewall

	beating
	header    http.Header
	status    int
	streaming bool
	own       bool         // the held answer is keel's own (answer)
	pending   []byte       // the start of an event not yet complete
	body      bytes.Buffer // the held answer
}

func (p *postWriter) Header() http.Header { return p.header }

// SetReadDeadline bounds the read of the request's body on the connection
// beneath (HTTPOptions.ReadBodyTimeout); it is the one method of the
// writer beneath a handler reaches through http.ResponseController.
func (p *postWriter) SetReadDeadline(t time.Time) error {
	return http.NewResponseController(p.w).SetReadDeadline(t)
}

func (p *postWriter) WriteHeader(status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decide(status)
}

// decide, on the first status or write, keeps the stream or holds the answer.
func (p *postWriter) decide(status int) {
	if p.status != 0 {
		return
	}
	p.status = status
	if p.mode.stream && p.canStream() {
		p.startStream()
	}
}

// canStream: the SDK's answer is an event stream, which may be kept.
func (p *postWriter) canStream() bool {
	return p.status == http.StatusOK && isEventStream(p.header) && !p.mode.batch
}

func (p *postWriter) startStream() {
	p.streaming = true
	for k, v := range p.header {
		p.w.Header()[k] = v
	}
	p.w.WriteHeader(p.status)
	p.startBeat(p.w, p.fw.heartbeat)
}

// logNotification is what a handler's report.Log puts on its call's stream.
var logNotification = []byte(`"notifications/message"`)

// clientRequests are the methods of a request to a client of the
// 2025-11-25 revision on its call's stream (keel's approval question, a
// handler's own input requests): the client must read it before the call
// can end.
var clientRequests = [][]byte{[]byte(`"elicitation/create"`), []byte(`"sampling/createMessage"`), []byte(`"roots/list"`)}

// asksClient reports whether events b carry a request to the client (one
// of clientRequests as a message's own method; an input request of
// 2026-07-28 names one too, inside a result, which is held as any result).
func asksClient(b []byte) bool {
	if !slices.ContainsFunc(clientRequests, func(m []byte) bool { return bytes.Contains(b, m) }) {
		return false
	}
	for line := range bytes.Lines(b) {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(data, &msg) == nil && ask.KindOf(msg.Method) != 0 {
			return true
		}
	}
	return false
}

func (p *postWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decide(http.StatusOK)
	if !p.streaming {
		// A call whose handler logs to a client that listens, or that asks
		// the client's person, is answered as events from its first such
		// message on, held ones first; any other answer stays held, to be
		// sent as JSON.
		if !(bytes.Contains(b, logNotification) || asksClient(b)) || !p.canStream() {
			return p.body.Write(b)
		}
		p.startStream()
		p.pending = append(p.pending, p.body.Bytes()...)
		p.body.Reset()
	}
	p.pending = append(p.pending, b...)
	var events []byte
	for {
		i := bytes.Index(p.pending, []byte("\n\n"))
		if i < 0 {
			break
		}
		events = append(events, p.fw.sanitizeEvent(p.pending[:i])...)
		p.pending = p.pending[i+2:]
	}
	if len(events) > 0 {
		if err := p.limit.write(p.w, events); err != nil {
			return 0, err
		}
		p.beat.wrote()
	}
	return len(b), nil
}

// answer holds keel's own answer to the POST (answer.go), sent as it is:
// keel wrote it, so there is nothing of the SDK's to sanitize.
func (p *postWriter) answer(body []byte, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.header.Set("Content-Type", "application/json")
	p.status, p.own = status, true
	p.body.Reset()
	p.body.Write(body)
}

func (p *postWriter) Flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.streaming {
		p.limit.flush(p.w)
	}
}

// finish ends a stream, or writes the held answer: a JSON-RPC answer
// sanitized whole (an event stream's responses as application/json), an
// error status as its status text alone.
func (p *postWriter) finish() {
	f := p.fw
	p.stopBeat()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.streaming {
		if len(bytes.TrimSpace(p.pending)) > 0 {
			f.log.LogAttrs(context.Background(), slog.LevelWarn, "keel: an event stream ended inside an event; the rest was dropped")
		}
		return
	}
	for k, v := range p.header {
		p.w.Header()[k] = v
	}
	status := p.status
	if status == 0 {
		status = http.StatusOK
	}
	body := p.body.Bytes()
	switch {
	case isEventStream(p.header) && status == http.StatusOK:
		var ok bool
		if body, ok = f.eventsAsJSON(body, p.mode.batch); ok {
			p.w.Header().Set("Content-Type", "application/json")
			p.w.Header().Del("Connection")
		} else {
			status, body = http.StatusInternalServerError, []byte(http.StatusText(http.StatusInternalServerError)+"\n")
			p.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
	case p.own: // keel's, written clean
	case strings.HasPrefix(p.header.Get("Content-Type"), "application/json"):
		body = f.sanitizeBody(body) // a JSON-RPC answer, whatever the status
	case status >= 400:
		body = []byte(http.StatusText(status) + "\n")
		p.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	if status == http.StatusUnauthorized && p.w.Header().Get("WWW-Authenticate") == "" {
		p.w.Header().Set("WWW-Authenticate", "Bearer")
	}
	if status == http.StatusOK && !p.mode.batch {
		if wait, limited := rateLimitedAnswer(body); limited {
			status = http.StatusTooManyRequests // the answer stays the JSON-RPC error, for clients that read it
			if wait > 0 {
				p.w.Header().Set("Retry-After", strconv.Itoa(wait))
			}
		}
	}
	p.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	p.w.WriteHeader(status)
	p.limit.arm(p.w) // a large answer its client does not read is bounded too
	p.w.Write(body)
}

// rateLimitedAnswer reports whether body is one JSON-RPC error response of
// CodeRateLimited, and the wait its data says (0 for none).
func rateLimitedAnswer(body []byte) (int, bool) {
	if !bytes.Contains(body, []byte(strconv.Itoa(CodeRateLimited))) {
		return 0, false
	}
	msg, err := jsonrpc.DecodeMessage(body)
	resp, ok := msg.(*jsonrpc.Response)
	var wire *jsonrpc.Error
	if err != nil || !ok || !errors.As(resp.Error, &wire) || wire.Code != CodeRateLimited {
		return 0, false
	}
	return limitOf(wire).RetryAfterSeconds, true
}

func isEventStream(h http.Header) bool {
	return strings.HasPrefix(h.Get("Content-Type"), "text/event-stream")
}

// eventsAsJSON turns a held event stream into the JSON answer: its
// responses, each sanitized, one alone or an array for a batch. A
// notification on the stream of a call that asked for none is dropped.
func (f firewall) eventsAsJSON(stream []byte, batch bool) ([]byte, bool) {
	var out []json.RawMessage
	for _, event := range bytes.Split(stream, []byte("\n\n")) {
		data, ok := eventData(event)
		if !ok {
			continue
		}
		if !bytes.Contains(data, []byte(`"error"`)) && !bytes.Contains(data, []byte(`"method"`)) {
			// The SDK wrote it: with no error member and no method it is a
			// response with a result, and nothing in it to sanitize.
			out = append(out, data)
			continue
		}
		msg, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			f.log.LogAttrs(context.Background(), slog.LevelWarn, "keel: an event that is not JSON-RPC; dropped", slog.Any("error", err))
			continue
		}
		if _, ok := msg.(*jsonrpc.Response); !ok {
			continue
		}
		out = append(out, f.sanitizeDecoded(data, msg))
	}
	switch {
	case batch:
		b, err := json.Marshal(out)
		return b, err == nil
	case len(out) == 1:
		return out[0], true
	}
	f.log.LogAttrs(context.Background(), slog.LevelWarn, "keel: an answer without exactly one response", slog.Int("responses", len(out)))
	return nil, false
}

// eventData returns the data of one event (its data lines joined); false
// for an event without data, a comment or a priming event.
func eventData(event []byte) ([]byte, bool) {
	var data [][]byte
	for _, line := range bytes.Split(event, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(v, []byte(" ")))
		}
	}
	if len(data) == 0 {
		return nil, false
	}
	return bytes.Join(data, []byte("\n")), true
}

// sanitizeEvent rewrites one event of a kept stream: a JSON-RPC error
// response says only its code's fixed text; other lines (event, id) pass.
// An event whose data is not JSON-RPC is replaced by an internal error.
func (f firewall) sanitizeEvent(event []byte) []byte {
	data, ok := eventData(event)
	var b bytes.Buffer
	for _, line := range bytes.Split(event, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("data:")) && len(bytes.TrimSpace(line)) > 0 {
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	if ok {
		b.WriteString("data: ")
		b.Write(f.sanitizeMessage(data))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}
