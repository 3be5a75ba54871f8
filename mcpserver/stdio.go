package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/runtime"
)

// On stdio keel frames the stream itself: one message per line, as the MCP
// spec says (messages are delimited by newlines and contain none). The
// SDK's reader ends the session on the first frame it cannot decode, and
// with it every call in flight and, under log.Fatal(ServeStdio(...)), the
// process. keel's framing answers every bad frame with a JSON-RPC error and reads
// on; it ends only at the end of input, a closed pipe or the context:
//
//   - a line that is not one JSON value (a stray byte, a truncated object,
//     nesting past the decoder's 10,000 levels): -32700, id null;
//   - a line over the frame limit: discarded up to its newline, never held
//     whole; -32600, id null;
//   - a batch (the protocol has none since 2025-06-18), a value that is no
//     object, a member named twice, or an object that is no JSON-RPC
//     message: -32600, under the request's id when it names one once, else
//     null.
//
// Once the session is known (bind), keel answers each tools/call itself
// (stdiocall.go); a call it does not answer goes to the SDK, which
// refuses it (front.go).

// stdioConn is an mcp.Connection over a byte stream in keel's framing.
type stdioConn struct {
	rc    io.ReadCloser
	log   *slog.Logger
	front *callFront // answers the tools/call frames (stdiocall.go)

	writeMu sync.Mutex
	w       io.Writer

	incoming  chan jsonrpc.Message
	readErr   error // set before incoming closes
	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// stdioConnection returns keel's connection for the SDK's two stream
// transports; ok is false for any other.
func stdioConnection(t mcp.Transport, log *slog.Logger, h *handler) (*stdioConn, bool) {
	switch t := t.(type) {
	case *mcp.StdioTransport:
		return newStdioConn(os.Stdin, os.Stdout, t.MaxLineLength, log, h), true
	case *mcp.IOTransport:
		return newStdioConn(t.Reader, t.Writer, t.MaxLineLength, log, h), true
	}
	return nil, false
}

// newStdioConn reads frames of at most maxLine bytes from r (0: the SDK's
// default, negative: none) and writes to w.
func newStdioConn(r io.ReadCloser, w io.Writer, maxLine int, log *slog.Logger, h *handler) *stdioConn {
	limit := maxLine
	if limit == 0 {
		limit = mcp.DefaultMaxLineLength
	}
	c := &stdioConn{rc: r, w: w, log: log, incoming: make(chan jsonrpc.Message), closed: make(chan struct{})}
	c.front = stdioFront(c, h, log)
	go c.readLoop(bufio.NewReaderSize(r, 64<<10), limit)
	return c
}

// Fixed answers to frames that are no message, for id null.
var (
	answerParseError     = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error."}}` + "\n")
	answerInvalidRequest = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request."}}` + "\n")
)

// readLoop reads lines until the input ends, handing each message on and
// answering each bad frame. A goroutine, so that Read can select on Close;
// like the SDK's, it leaks if r.Read never returns after Close.
func (c *stdioConn) readLoop(br *bufio.Reader, limit int) {
	defer close(c.incoming)
	var line []byte
	for {
		var over bool
		var err error
		line, over, err = readLine(br, line[:0], limit)
		if len(line) > 0 || over {
			msg, answer := c.frame(line, over)
			if answer != nil {
				if werr := c.writeRaw(answer); werr != nil {
					c.readErr = werr
					return
				}
			} else if msg != nil {
				select {
				case c.incoming <- msg:
				case <-c.closed:
					return
				}
			}
		}
		if cap(line) > 1<<20 {
			line = nil // a large frame's buffer is not kept
		}
		if err != nil {
			c.readErr = err
			return
		}
	}
}

// readLine appends the next line of br to buf, without its line end. over
// reports a line longer than limit (when limit > 0), whose bytes were read
// and dropped; err is io.EOF at the end (a last line without a newline is
// still returned).
func readLine(br *bufio.Reader, buf []byte, limit int) (line []byte, over bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			if limit > 0 && len(buf)+len(chunk) > limit+2 { // +2: the line end is not counted
				over, buf = true, buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		buf = bytes.TrimRight(buf, "\r\n")
		if over {
			buf = buf[:0]
		}
		return buf, over, err
	}
}

// frame decides one line: a message to hand the SDK, an answer to write,
// or neither (a blank line).
func (c *stdioConn) frame(line []byte, over bool) (jsonrpc.Message, []byte) {
	if over {
		c.log.LogAttrs(context.Background(), slog.LevelWarn, "keel: a stdio frame over the maximum line length; discarded")
		c.front.refused(nil, runtime.RefusedTooLarge)
		return nil, answerInvalidRequest
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, nil
	}
	m, err := readMessage(line)
	if err != nil {
		c.log.LogAttrs(context.Background(), slog.LevelWarn, "keel: a stdio frame that is not JSON; answered -32700", slog.Int("bytes", len(line)))
		c.front.refused(nil, runtime.RefusedNotJSON)
		return nil, answerParseError
	}
	if m.isCall() {
		m.raw = bytes.Clone(m.raw) // the line's buffer is read into again; a call keeps its bytes
		if c.front.answers(&m) {
			return nil, nil // keel's to answer (stdiocall.go)
		}
	}
	c.front.cancelCall(&m)
	msg, refusal, reason := m.decode()
	if msg == nil {
		c.log.LogAttrs(context.Background(), slog.LevelWarn, "keel: a stdio frame that is no JSON-RPC message; answered -32600", slog.String("reason", reason))
		c.front.refused(&m, refusal)
		return nil, m.invalidRequest()
	}
	if c.front.keelCall(&m) {
		c.front.refused(&m, runtime.RefusedProtocol) // one keel did not answer: the SDK answers its refusal
	}
	return msg, nil
}

// decode is the message the SDK gets for m; nil, the audit's refusal and
// why in words when m is no message keel serves.
func (m *message) decode() (jsonrpc.Message, runtime.Refusal, string) {
	switch {
	case m.kind == '[':
		return nil, runtime.RefusedBatch, "a batch"
	case m.kind != '{':
		return nil, runtime.RefusedNotAMessage, "not an object"
	case m.duplicate:
		return nil, runtime.RefusedDuplicate, "a member named twice"
	}
	if req, ok := m.request(); ok {
		return req, "", ""
	}
	msg, err := jsonrpc.DecodeMessage(m.raw) // a response, or a request the SDK is to refuse
	if err != nil {
		return nil, runtime.RefusedNotAMessage, err.Error()
	}
	return msg, "", ""
}

// request is m as the SDK's decoder would make it, built from what the
// front read (one parse of the line, not two); false for anything but a
// well-formed request.
func (m *message) request() (*jsonrpc.Request, bool) {
	if m.version != "2.0" || !m.hasMethod || m.method == "" || m.ids > 1 {
		return nil, false
	}
	req := &jsonrpc.Request{Method: m.method}
	if m.ids == 1 {
		raw := m.id.bytesOf(m.raw)
		var v any
		switch {
		case raw[0] == '"':
			v, _ = unquote(raw)
		case string(raw) == "null":
		default:
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil {
				return nil, false // not a number a decoder reads: the SDK's to refuse
			}
			v = f
		}
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			return nil, false
		}
		req.ID = id
	}
	switch {
	case m.hasParams:
		req.Params = bytes.Clone(m.params.bytesOf(m.raw)) // the line's buffer is read into again
	}
	return req, true
}

// invalidRequest is -32600 under m's id when it names one once (a string
// or a number), else under null.
func (m *message) invalidRequest() []byte {
	id := m.id.bytesOf(m.raw)
	if m.kind != '{' || m.ids != 1 || len(id) == 0 || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
		return answerInvalidRequest
	}
	out := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	return append(out, `,"error":{"code":-32600,"message":"Invalid request."}}`+"\n"...)
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case msg, ok := <-c.incoming:
		if !ok {
			return nil, c.readErr
		}
		return msg, nil
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeRaw(append(data, '\n'))
}

func (c *stdioConn) writeRaw(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return errors.New("mcpserver: write on a closed connection")
	default:
	}
	_, err := c.w.Write(data)
	return err
}

func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.front.close()
		close(c.closed)
		c.closeErr = c.rc.Close()
		if wc, ok := c.w.(io.Closer); ok && c.w != os.Stdout {
			wc.Close()
		}
	})
	return c.closeErr
}

func (c *stdioConn) SessionID() string { return "" }
