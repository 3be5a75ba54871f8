package front

import (
	"bufio"
	"bytes"
	"strconv"

	"github.com/keelgen/keel/runtime"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ReadLine appends the next line of br to buf, without its line end. over
// reports a line longer than limit (when limit > 0), whose bytes were read
// and dropped; err is io.EOF at the end (a last line without a newline is
// still returned).
func ReadLine(br *bufio.Reader, buf []byte, limit int) (line []byte, over bool, err error) {
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

// ForSDK is the message the SDK gets for m; nil, the audit's refusal and
// why in words when m is no message keel serves.
func (m *Message) ForSDK() (jsonrpc.Message, string, string) {
	switch {
	case m.Kind == '[':
		return nil, runtime.RefusedBatch, "a batch"
	case m.Kind != '{':
		return nil, runtime.RefusedNotAMessage, "not an object"
	case m.Duplicate:
		return nil, runtime.RefusedDuplicate, "a member named twice"
	}
	if req, ok := m.Request(); ok {
		return req, "", ""
	}
	msg, err := jsonrpc.DecodeMessage(m.Raw) // a response, or a request the SDK is to refuse
	if err != nil {
		return nil, runtime.RefusedNotAMessage, err.Error()
	}
	return msg, "", ""
}

// Request is m as the SDK's decoder would make it, built from what the
// front read (one parse of the line, not two); false for anything but a
// well-formed Request.
func (m *Message) Request() (*jsonrpc.Request, bool) {
	if m.Version != "2.0" || !m.HasMethod || m.Method == "" || m.IDs > 1 {
		return nil, false
	}
	req := &jsonrpc.Request{Method: m.Method}
	if m.IDs == 1 {
		raw := m.ID.Bytes(m.Raw)
		var v any
		switch {
		case raw[0] == '"':
			v, _ = Unquote(raw)
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
	case m.HasParams:
		req.Params = bytes.Clone(m.Params.Bytes(m.Raw)) // the line's buffer is read into again
	}
	return req, true
}

// InvalidRequest is -32600 under m's id when it names one once (a string
// or a number), else under null.
func (m *Message) InvalidRequest() []byte {
	id := m.ID.Bytes(m.Raw)
	if m.Kind != '{' || m.IDs != 1 || len(id) == 0 || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
		return AnswerInvalidRequest
	}
	out := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	return append(out, `,"error":{"code":-32600,"message":"Invalid request."}}`+"\n"...)
}

// Fixed answers, each one line, to frames that are no message: for id
// null.
var (
	AnswerParseError     = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error."}}` + "\n")
	AnswerInvalidRequest = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request."}}` + "\n")
)
