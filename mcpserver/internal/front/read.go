package front

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

// maxFrontMembers is how many members of one envelope object are compared
// pairwise for duplicates; past it, a map.
const maxFrontMembers = 16

// ErrNotJSON is a frame that is not one JSON value.
var ErrNotJSON = errors.New("mcpserver: a frame that is not one JSON value")

// Span is a value's bytes within the message: raw[start:end].
type Span struct{ Start, End int64 }

type Member struct {
	Name  string
	Value Span
}

// Message is what the front read of one JSON-RPC frame.
type Message struct {
	Kind      jsontext.Kind // '{' a message, '[' a batch, else neither
	Duplicate bool          // a member of the message, its params or their _meta named twice
	Version   string        // "jsonrpc", when a string
	Method    string        // "" when absent or not a string
	HasMethod bool          // "method" is a string
	IDs       int           // how many times "id" is named
	Answers   int           // how many times "result" or "error" is named: a response's
	ID        Span          // the last "id"
	Params    Span          // the params' bytes; zero when absent
	HasParams bool
	// Of params, when an object:
	ParamMembers []Member
	Name         Span // the "name" member's value; zero when absent
	HasName      bool
	Arguments    Span
	HasArguments bool
	MetaMembers  []Member // of _meta, when an object
	HasMeta      bool     // _meta is present
	MetaObject   bool     // and an object
	ParamsObject bool
	// CarryName: the client's SDK could not read the arguments, so it wrote
	// no Mcp-Name header for the call (NameCarried).
	CarryName bool

	Raw []byte // the frame
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
		return ErrNotJSON // trailing data
	}
	return nil
}

// Read reads one frame. It fails only when raw is not exactly one
// JSON value (a parse error); every other flaw is in the message it
// returns. Invalid UTF-8 passes: inside arguments it is the executor's to
// refuse.
func Read(raw []byte) (Message, error) {
	m := Message{Raw: raw}
	err := decode(raw, func(dec *jsontext.Decoder) error {
		m.Kind = dec.PeekKind()
		if m.Kind == '{' {
			return m.readEnvelope(dec)
		}
		return dec.SkipValue()
	})
	if err != nil {
		return Message{}, ErrNotJSON
	}
	return m, nil
}

// ReadParams reads a request's params alone, as a transport that decoded
// the message hands them on: m.raw is the params.
func ReadParams(method string, params []byte) (Message, error) {
	m := Message{Raw: params, Kind: '{', Method: method, IDs: 1, HasParams: true}
	err := decode(params, func(dec *jsontext.Decoder) error { return m.readParams(dec) })
	if err != nil {
		return Message{}, ErrNotJSON
	}
	return m, nil
}

func (m *Message) readEnvelope(dec *jsontext.Decoder) error {
	return readObject(dec, &m.Duplicate, func(name string) error {
		switch name {
		case "jsonrpc":
			v, err := valueSpan(dec)
			m.Version, _ = Unquote(v.Bytes(m.Raw))
			return err
		case "id":
			m.IDs++
			v, err := valueSpan(dec)
			m.ID = v
			return err
		case "method":
			v, err := valueSpan(dec)
			m.Method, m.HasMethod = Unquote(v.Bytes(m.Raw))
			return err
		case "params":
			m.HasParams = true
			return m.readParams(dec)
		case "result", "error":
			m.Answers++
		}
		return dec.SkipValue()
	})
}

// readParams reads the params value, descending into an object and its
// _meta.
func (m *Message) readParams(dec *jsontext.Decoder) error {
	m.ParamsObject = dec.PeekKind() == '{'
	if !m.ParamsObject {
		v, err := valueSpan(dec)
		m.Params = v
		return err
	}
	start := dec.InputOffset()
	m.ParamMembers, m.MetaMembers = m.ParamMembers[:0], m.MetaMembers[:0]
	m.HasName, m.HasArguments, m.HasMeta, m.MetaObject = false, false, false, false
	err := readObject(dec, &m.Duplicate, func(name string) error {
		if name == "_meta" && dec.PeekKind() == '{' {
			m.HasMeta, m.MetaObject = true, true
			return readObject(dec, &m.Duplicate, func(name string) error {
				v, err := valueSpan(dec)
				m.MetaMembers = append(m.MetaMembers, Member{name, v})
				return err
			})
		}
		v, err := valueSpan(dec)
		switch name {
		case "arguments":
			m.Arguments, m.HasArguments = v, true
			return err
		case "name":
			m.Name, m.HasName = v, true
		case "_meta":
			m.HasMeta = true
		}
		m.ParamMembers = append(m.ParamMembers, Member{name, v})
		return err
	})
	// The object began at the first byte that is not white space.
	m.Params = Span{start + int64(len(m.Raw[start:])-len(bytes.TrimLeft(m.Raw[start:], " \t\r\n:"))), dec.InputOffset()}
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
func valueSpan(dec *jsontext.Decoder) (Span, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return Span{}, err
	}
	end := dec.InputOffset()
	return Span{end - int64(len(v)), end}, nil
}

// Bytes is s's bytes in raw.
func (s Span) Bytes(raw []byte) []byte { return raw[s.Start:s.End] }

// PerRequestRevision reports whether the message's _meta names a protocol
// version (SEP-2575's per-request metadata): a request of the 2026-07-28
// revision, which has no session.
func (m *Message) PerRequestRevision() bool {
	for _, mm := range m.MetaMembers {
		if mm.Name == metaProtocolVersion {
			return true
		}
	}
	return false
}

const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// IsCall reports whether m is a tools/call request whose params and
// _meta are objects: a call keel may answer. Any other tools/call is the
// SDK's to refuse (Invalid params).
func (m *Message) IsCall() bool {
	return m.Kind == '{' && m.Method == "tools/call" && m.IDs == 1 && m.ParamsObject && (!m.HasMeta || m.MetaObject)
}

// CallName is the tools/call's name as sent, and whether it is a string.
func (m *Message) CallName() (string, bool) {
	if !m.HasName {
		return "", false
	}
	return Unquote(m.Name.Bytes(m.Raw))
}

// NameCarried reports whether no Mcp-Name header can carry the call's
// name (a string no HTTP header carries as it is: empty, white space at an
// end, a control or non-ASCII byte; a hop trims or refuses such a value),
// or its client could write none: its call is answered whatever the
// header says. No keel tool has such a name.
func (m *Message) NameCarried() bool {
	name, ok := m.CallName()
	return ok && (m.CarryName || !HeaderSafe(name))
}

// sdkMaxDepth is the nesting the SDK's JSON decoder reads at most.
const sdkMaxDepth = 1000

// SDKReadable reports whether the SDK's decoder reads args into Go values
// (as a client SDK does to write the call's headers): no number past a
// float64 and no nesting past sdkMaxDepth.
func SDKReadable(args []byte) bool {
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

// HeaderSafe reports whether an HTTP header value carries s unchanged.
func HeaderSafe(s string) bool {
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

// Unquote is the string a JSON string value stands for; invalid UTF-8
// becomes U+FFFD, as the SDK's decoder reads it.
func Unquote(v []byte) (string, bool) {
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	s, err := jsontext.AppendUnquote(nil, v)
	if err != nil && utf8.Valid(v) { // v was read as a value: only its UTF-8 may be wrong
		return "", false
	}
	return string(s), true
}
