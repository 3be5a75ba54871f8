package mcpserver

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The front reads every JSON-RPC message's bytes once, before anything
// else does: on stdio (keel's own framing, stdioConn), over HTTP
// (envelopeCheck), and on any other transport from the SDK's decoded
// message (frontedConnection).
//
//   - A message that names a member twice (of its own, of its params or of
//     their _meta) is refused: the SDK's decoder takes the last of the two,
//     while a proxy, an audit or a person reading it may take the first.
//   - A tools/call is answered by keel from this reading (answer.go,
//     sessioncall.go, stdiocall.go): its arguments reach the executor's one
//     strict reader as their exact bytes, and the SDK's decoder never sees
//     the call, so nothing it would refuse or read otherwise (numbers past
//     a float64, nesting past 1,000 levels, a member's case) decides what
//     runs. A call keel does not answer goes to the SDK as sent, which
//     refuses it, or, past the SDK's checks, New's middleware does.
//   - Every other message goes to the SDK as sent: initialize and the
//     session, tools/list, ping, logging, the tasks methods.

// maxFrontMembers is how many members of one envelope object are compared
// pairwise for duplicates; past it, a map.
const maxFrontMembers = 16

// errNotJSON is a frame that is not one JSON value.
var errNotJSON = errors.New("mcpserver: a frame that is not one JSON value")

// span is a value's bytes within the message: raw[start:end].
type span struct{ start, end int64 }

type member struct {
	name  string
	value span
}

// message is what the front read of one JSON-RPC frame.
type message struct {
	kind      jsontext.Kind // '{' a message, '[' a batch, else neither
	duplicate bool          // a member of the message, its params or their _meta named twice
	version   string        // "jsonrpc", when a string
	method    string        // "" when absent or not a string
	hasMethod bool          // "method" is a string
	ids       int           // how many times "id" is named
	answers   int           // how many times "result" or "error" is named: a response's
	id        span          // the last "id"
	params    span          // the params' bytes; zero when absent
	hasParams bool
	// Of params, when an object:
	paramMembers []member
	name         span // the "name" member's value; zero when absent
	hasName      bool
	arguments    span
	hasArguments bool
	metaMembers  []member // of _meta, when an object
	hasMeta      bool     // _meta is present
	metaObject   bool     // and an object
	paramsObject bool
	// carryName: the client's SDK could not read the arguments, so it wrote
	// no Mcp-Name header for the call (nameCarried).
	carryName bool

	raw []byte // the frame
}

// frontOptions are what the front's decoder allows: what the SDK's
// decoder accepts passes, for the SDK (or, in arguments, the executor) to
// refuse.
var frontOptions = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// frontDecoder is a decoder over a byte slice, pooled: one a message.
type frontDecoder struct {
	r   bytes.Reader
	dec *jsontext.Decoder
}

var frontDecoders = sync.Pool{New: func() any {
	d := &frontDecoder{}
	d.dec = jsontext.NewDecoder(&d.r, frontOptions)
	return d
}}

// decode runs read over a pooled decoder of raw. What read keeps of raw
// are spans of it, never the decoder's buffer.
func decode(raw []byte, read func(*jsontext.Decoder) error) error {
	d := frontDecoders.Get().(*frontDecoder)
	defer frontDecoders.Put(d)
	d.r.Reset(raw)
	d.dec.Reset(&d.r, frontOptions)
	if err := read(d.dec); err != nil {
		return err
	}
	if _, err := d.dec.ReadToken(); err != io.EOF {
		return errNotJSON // trailing data
	}
	return nil
}

// readMessage reads one frame. It fails only when raw is not exactly one
// JSON value (a parse error); every other flaw is in the message it
// returns. Invalid UTF-8 passes: inside arguments it is the executor's to
// refuse.
func readMessage(raw []byte) (message, error) {
	m := message{raw: raw}
	err := decode(raw, func(dec *jsontext.Decoder) error {
		m.kind = dec.PeekKind()
		if m.kind == '{' {
			return m.readEnvelope(dec)
		}
		return dec.SkipValue()
	})
	if err != nil {
		return message{}, errNotJSON
	}
	return m, nil
}

// readParams reads a request's params alone, as a transport that decoded
// the message hands them on: m.raw is the params.
func readParams(method string, params []byte) (message, error) {
	m := message{raw: params, kind: '{', method: method, ids: 1, hasParams: true}
	err := decode(params, func(dec *jsontext.Decoder) error { return m.readParams(dec) })
	if err != nil {
		return message{}, errNotJSON
	}
	return m, nil
}

func (m *message) readEnvelope(dec *jsontext.Decoder) error {
	return readObject(dec, &m.duplicate, func(name string) error {
		switch name {
		case "jsonrpc":
			v, err := valueSpan(dec)
			m.version, _ = unquote(v.bytesOf(m.raw))
			return err
		case "id":
			m.ids++
			v, err := valueSpan(dec)
			m.id = v
			return err
		case "method":
			v, err := valueSpan(dec)
			m.method, m.hasMethod = unquote(v.bytesOf(m.raw))
			return err
		case "params":
			m.hasParams = true
			return m.readParams(dec)
		case "result", "error":
			m.answers++
		}
		return dec.SkipValue()
	})
}

// readParams reads the params value, descending into an object and its
// _meta.
func (m *message) readParams(dec *jsontext.Decoder) error {
	m.paramsObject = dec.PeekKind() == '{'
	if !m.paramsObject {
		v, err := valueSpan(dec)
		m.params = v
		return err
	}
	start := dec.InputOffset()
	m.paramMembers, m.metaMembers = m.paramMembers[:0], m.metaMembers[:0]
	m.hasName, m.hasArguments, m.hasMeta, m.metaObject = false, false, false, false
	err := readObject(dec, &m.duplicate, func(name string) error {
		if name == "_meta" && dec.PeekKind() == '{' {
			m.hasMeta, m.metaObject = true, true
			return readObject(dec, &m.duplicate, func(name string) error {
				v, err := valueSpan(dec)
				m.metaMembers = append(m.metaMembers, member{name, v})
				return err
			})
		}
		v, err := valueSpan(dec)
		switch name {
		case "arguments":
			m.arguments, m.hasArguments = v, true
			return err
		case "name":
			m.name, m.hasName = v, true
		case "_meta":
			m.hasMeta = true
		}
		m.paramMembers = append(m.paramMembers, member{name, v})
		return err
	})
	// The object began at the first byte that is not white space.
	m.params = span{start + int64(len(m.raw[start:])-len(bytes.TrimLeft(m.raw[start:], " \t\r\n:"))), dec.InputOffset()}
	return err
}

// readObject reads an object, calling each for every member after its
// name, and sets *dup when a name comes twice.
func readObject(dec *jsontext.Decoder, dup *bool, each func(name string) error) error {
	if _, err := dec.ReadToken(); err != nil { // {
		return err
	}
	var few [maxFrontMembers]string
	seen, many := few[:0], map[string]bool(nil)
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		switch {
		case many != nil:
			*dup = *dup || many[name]
			many[name] = true
		case len(seen) < maxFrontMembers:
			for _, s := range seen {
				*dup = *dup || s == name
			}
			seen = append(seen, name)
		default:
			many = make(map[string]bool, 2*maxFrontMembers)
			for _, s := range seen {
				many[s] = true
			}
			*dup = *dup || many[name]
			many[name] = true
		}
		if err := each(name); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken() // }
	return err
}

// valueSpan reads the next value and returns where it stands.
func valueSpan(dec *jsontext.Decoder) (span, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return span{}, err
	}
	end := dec.InputOffset()
	return span{end - int64(len(v)), end}, nil
}

// bytesOf is s's bytes in raw.
func (s span) bytesOf(raw []byte) []byte { return raw[s.start:s.end] }

// perRequestRevision reports whether the message's _meta names a protocol
// version (SEP-2575's per-request metadata): a request of the 2026-07-28
// revision, which has no session.
func (m *message) perRequestRevision() bool {
	for _, mm := range m.metaMembers {
		if mm.name == metaProtocolVersion {
			return true
		}
	}
	return false
}

const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// isCall reports whether m is a tools/call request whose params and
// _meta are objects: a call keel may answer. Any other tools/call is the
// SDK's to refuse (Invalid params).
func (m *message) isCall() bool {
	return m.kind == '{' && m.method == "tools/call" && m.ids == 1 && m.paramsObject && (!m.hasMeta || m.metaObject)
}

// callName is the tools/call's name as sent, and whether it is a string.
func (m *message) callName() (string, bool) {
	if !m.hasName {
		return "", false
	}
	return unquote(m.name.bytesOf(m.raw))
}

// nameCarried reports whether no Mcp-Name header can carry the call's
// name (a string no HTTP header carries as it is: empty, white space at an
// end, a control or non-ASCII byte; a hop trims or refuses such a value),
// or its client could write none: its call is answered whatever the
// header says. No keel tool has such a name.
func (m *message) nameCarried() bool {
	name, ok := m.callName()
	return ok && (m.carryName || !headerSafe(name))
}

// sdkMaxDepth is the nesting the SDK's JSON decoder reads at most.
const sdkMaxDepth = 1000

// sdkReadable reports whether the SDK's decoder reads args into Go values
// (as a client SDK does to write the call's headers): no number past a
// float64 and no nesting past sdkMaxDepth.
func sdkReadable(args []byte) bool {
	if len(args) == 0 {
		return true
	}
	dec := jsontext.NewDecoder(bytes.NewReader(args), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return true
		}
		if err != nil || dec.StackDepth() > sdkMaxDepth {
			return false
		}
		if tok.Kind() == '0' {
			if _, err := strconv.ParseFloat(tok.String(), 64); err != nil {
				return false
			}
		}
	}
}

// headerSafe reports whether an HTTP header value carries s unchanged.
func headerSafe(s string) bool {
	if s == "" || strings.Trim(s, " \t") != s {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// unquote is the string a JSON string value stands for; invalid UTF-8
// becomes U+FFFD, as the SDK's decoder reads it.
func unquote(v []byte) (string, bool) {
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	s, err := jsontext.AppendUnquote(nil, v)
	if err != nil && utf8.Valid(v) { // v was read as a value: only its UTF-8 may be wrong
		return "", false
	}
	return string(s), true
}
