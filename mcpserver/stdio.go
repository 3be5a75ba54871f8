package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// On stdio the SDK's decoder merges a message's members before keel sees
// it: of {"method":"ping","method":"tools/call"} it runs the last. So the
// bytes are read here first, one JSON value (one message or batch) at a
// time, and each that names a member twice (of the message, its params or
// their _meta) is replaced before the SDK reads it: a request whose id is
// named once by one the SDK answers "Invalid params." under that id;
// anything else (a notification, a batch, a twice-named id) by nothing.
// Nothing it named runs either way.

// stdioFiltered returns t with its input read through an envelopeReader,
// for the SDK's two stream transports over an io.Reader; any other
// transport is returned as it is (Transport's connection still refuses
// duplicate params on it).
func stdioFiltered(t mcp.Transport, log *slog.Logger) mcp.Transport {
	switch t := t.(type) {
	case *mcp.StdioTransport:
		return &mcp.IOTransport{Reader: newEnvelopeReader(os.Stdin, t.MaxLineLength, log), Writer: nopCloser{os.Stdout}, MaxLineLength: t.MaxLineLength}
	case *mcp.IOTransport:
		return &mcp.IOTransport{Reader: newEnvelopeReader(t.Reader, t.MaxLineLength, log), Writer: t.Writer, MaxLineLength: t.MaxLineLength}
	}
	return t
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// errFrameTooLarge ends a stream whose message outgrows the frame limit
// before it is whole, as the SDK's own reader would.
var errFrameTooLarge = errors.New("mcpserver: a JSON-RPC message over the maximum line length")

// envelopeReader hands the SDK's reader the stream's messages, one per
// line, each checked for duplicate members first. It keeps at most one
// message (bounded by the frame limit) in memory.
type envelopeReader struct {
	src   io.ReadCloser
	dec   *jsontext.Decoder
	log   *slog.Logger
	limit int64 // bytes one message may take; <= 0: none

	read, start int64  // bytes read from src; where the current message starts
	buf         []byte // the message handed on, reused
	out         []byte // what is left of it to hand on
	err         error
}

func newEnvelopeReader(src io.ReadCloser, maxLine int, log *slog.Logger) *envelopeReader {
	r := &envelopeReader{src: src, log: log, limit: int64(maxLine)}
	if maxLine == 0 {
		r.limit = mcp.DefaultMaxLineLength
	}
	// What the SDK's decoder accepts, this one does: the SDK, not keel,
	// answers malformed input.
	r.dec = jsontext.NewDecoder(sourceCounter{r}, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	return r
}

func (r *envelopeReader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		msg, err := r.dec.ReadValue()
		r.start = r.dec.InputOffset()
		if err != nil {
			r.err = err // io.EOF, a syntax error, or the frame limit: the SDK ends the session
			continue
		}
		// A copy: msg is the decoder's buffer, voided by its next read.
		r.buf = append(append(r.buf[:0], r.checked(msg)...), '\n')
		r.out = r.buf
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

func (r *envelopeReader) Close() error { return r.src.Close() }

// checked is msg, or what stands in for it when it names a member twice.
func (r *envelopeReader) checked(msg jsontext.Value) []byte {
	if !envelopeDuplicate(msg) {
		return msg
	}
	id, ok := singleID(msg)
	r.log.LogAttrs(context.Background(), slog.LevelWarn, "keel: a JSON-RPC message names a member twice; refused", slog.Bool("answered", ok))
	if !ok {
		return nil
	}
	// A ping whose params are no object: the SDK answers Invalid params.
	return append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"method":"ping","params":"a member named twice"}`...)
}

// singleID returns the id of a request object that names "id" once.
func singleID(msg jsontext.Value) (jsontext.Value, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(msg), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if dec.PeekKind() != '{' {
		return nil, false
	}
	dec.ReadToken()
	var id jsontext.Value
	ids := 0
	for dec.PeekKind() == '"' {
		name, _ := dec.ReadToken()
		isID := name.String() == "id" // before ReadValue voids the token
		v, err := dec.ReadValue()
		if err != nil {
			return nil, false
		}
		if isID {
			ids++
			id = bytes.Clone(v)
		}
	}
	return id, ids == 1 && (id.Kind() == '"' || id.Kind() == '0')
}

// sourceCounter reads src for the decoder, refusing to read more once the
// message being read is over the limit.
type sourceCounter struct{ r *envelopeReader }

func (s sourceCounter) Read(p []byte) (int, error) {
	r := s.r
	if r.limit > 0 && r.read-r.start > r.limit {
		return 0, errFrameTooLarge
	}
	n, err := r.src.Read(p)
	r.read += int64(n)
	return n, err
}
