package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver/internal/front"
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
// refuses it (internal/front).

// stdioConn is an mcp.Connection over a byte stream in keel's framing.
type stdioConn struct {
	rc    io.ReadCloser
	log   *slog.Logger
	front *callFront // answers the tools/call frames (stdiocall.go)

	writeMu sync.Mutex
	w       io.Writer
	closeW  bool // close w on Close: not the process's standard output

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
	// Whether w is the process's standard output is read here, once: a
	// program (or go test, running an Example) may swap os.Stdout later.
	c := &stdioConn{rc: r, w: w, closeW: w != io.Writer(os.Stdout), log: log, incoming: make(chan jsonrpc.Message), closed: make(chan struct{})}
	c.front = stdioFront(c, h, log)
	go c.readLoop(bufio.NewReaderSize(r, 64<<10), limit)
	return c
}

// readLoop reads lines until the input ends, handing each message on and
// answering each bad frame. A goroutine, so that Read can select on Close;
// like the SDK's, it leaks if r.Read never returns after Close.
func (c *stdioConn) readLoop(br *bufio.Reader, limit int) {
	defer close(c.incoming)
	var line []byte
	for {
		var over bool
		var err error
		line, over, err = front.ReadLine(br, line[:0], limit)
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
			// The end of input ends the session once keel's calls in
			// flight have answered: a client may close stdin and wait.
			c.front.wait(c.closed)
			c.readErr = err
			return
		}
	}
}

// frame decides one line: a message to hand the SDK, an answer to write,
// or neither (a blank line).
func (c *stdioConn) frame(line []byte, over bool) (jsonrpc.Message, []byte) {
	if over {
		c.log.LogAttrs(context.Background(), slog.LevelWarn, "keel: a stdio frame over the maximum line length; discarded")
		c.front.refused(nil, runtime.RefusedTooLarge)
		return nil, front.AnswerInvalidRequest
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, nil
	}
	m, err := front.Read(line)
	if err != nil {
		c.log.LogAttrs(context.Background(), slog.LevelWarn, "keel: a stdio frame that is not JSON; answered -32700", slog.Int("bytes", len(line)))
		c.front.refused(nil, runtime.RefusedNotJSON)
		return nil, front.AnswerParseError
	}
	if m.IsCall() {
		m.Raw = bytes.Clone(m.Raw) // the line's buffer is read into again; a call keeps its bytes
		if c.front.answers(&m) {
			return nil, nil // keel's to answer (stdiocall.go)
		}
	}
	c.front.cancelCall(&m)
	msg, refusal, reason := m.ForSDK()
	c.front.handed(msg)
	if msg == nil {
		c.log.LogAttrs(context.Background(), slog.LevelWarn, "keel: a stdio frame that is no JSON-RPC message; answered -32600", slog.String("reason", reason))
		c.front.refused(&m, refusal)
		return nil, m.InvalidRequest()
	}
	if c.front.keelCall(&m) {
		c.front.refused(&m, runtime.RefusedProtocol) // one keel did not answer: the SDK answers its refusal
	}
	return msg, nil
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
	err = c.writeRaw(append(data, '\n'))
	c.front.written(msg)
	return err
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
		if wc, ok := c.w.(io.Closer); ok && c.closeW {
			wc.Close()
		}
	})
	return c.closeErr
}

func (c *stdioConn) SessionID() string { return "" }
