package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A JSON-RPC envelope with a member named twice ({"arguments": ...,
// "arguments": ...}) is refused: the SDK's decoder takes the last of the
// two, while a proxy, an audit or a person reading the request may take the
// first. Duplicates inside a tool's arguments are the executor's to refuse
// (invalid_arguments); these checks look only at the envelope: a message's
// own members and its params' members.

// envelopeDuplicate reports whether a JSON-RPC body (one message or a batch)
// names a member twice: of a message, of its params, or of the params'
// _meta (where keel/grant and keel/call_id travel). A body that does not
// parse is the SDK's to answer.
func envelopeDuplicate(body []byte) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	switch dec.PeekKind() {
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return false
		}
		for dec.PeekKind() == '{' {
			if objectDuplicate(dec, "params", "_meta") {
				return true
			}
		}
		return false
	case '{':
		return objectDuplicate(dec, "params", "_meta")
	}
	return false
}

// objectDuplicate reads one object, reporting a member named twice in it
// or, along path, in the object of the member named path[0], and so on.
func objectDuplicate(dec *jsontext.Decoder, path ...string) bool {
	if _, err := dec.ReadToken(); err != nil { // {
		return false
	}
	seen := map[string]bool{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil || tok.Kind() != '"' {
			return false
		}
		name := tok.String()
		if seen[name] {
			return true
		}
		seen[name] = true
		if len(path) > 0 && name == path[0] && dec.PeekKind() == '{' {
			if objectDuplicate(dec, path[1:]...) {
				return true
			}
			continue
		}
		if err := dec.SkipValue(); err != nil {
			return false
		}
	}
	dec.ReadToken() // }
	return false
}

// paramsDuplicate reports a member named twice in a request's params or
// in their _meta.
func paramsDuplicate(params json.RawMessage) bool {
	if len(params) == 0 {
		return false
	}
	dec := jsontext.NewDecoder(bytes.NewReader(params), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	return dec.PeekKind() == '{' && objectDuplicate(dec, "_meta")
}

// envelopeCheck refuses, over HTTP, a POST whose envelope names a member
// twice (400, nothing runs). A body over the cap passes untouched, for the
// SDK's 413.
type envelopeCheck struct {
	next     http.Handler
	max      int64
	log      *slog.Logger
	inflight *inflight // Stateless only: calls a POST of their own may cancel
	stepUp   *stepUp   // with a Verifier, for a set with scoped tools
}

func (c envelopeCheck) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		c.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, c.max+1))
	if err != nil {
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return
	}
	if int64(len(body)) <= c.max && envelopeDuplicate(body) {
		c.log.LogAttrs(r.Context(), slog.LevelWarn, "keel: a JSON-RPC envelope names a member twice; refused")
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return
	}
	if int64(len(body)) <= c.max && c.stepUp != nil && c.stepUp.refused(w, r, body) {
		return
	}
	if int64(len(body)) <= c.max {
		notePostMode(r.Context(), body)
		if c.inflight != nil && !c.inflight.cancel(r, body) {
			var forget func()
			r, forget = c.inflight.track(r, body)
			defer forget()
		}
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	c.next.ServeHTTP(w, r)
}

// refuseDuplicateParams makes, on a stream transport, a request whose params
// name a member twice unreadable to the SDK, which answers it "Invalid
// params." (the message's own members the transport's decoder already
// merged; the params it keeps as sent). On stdio, envelopeReader has seen
// the whole message first.
func refuseDuplicateParams(ctx context.Context, msg jsonrpc.Message, log *slog.Logger) jsonrpc.Message {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !paramsDuplicate(req.Params) {
		return msg
	}
	log.LogAttrs(ctx, slog.LevelWarn, "keel: a request's params name a member twice; refused", slog.String("method", req.Method))
	out := *req
	out.Params = json.RawMessage(`"params named a member twice"`)
	return &out
}
