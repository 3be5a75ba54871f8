package front

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// A tool's input schema may mark an argument x-mcp-header (SEP-2243): a
// client of the 2026-07-28 revision mirrors its value into a header
// Mcp-Param-<name>, where a load balancer can route on it. keel checks
// every such header against the arguments it runs, itself, so the check
// holds also for arguments the SDK cannot read (a number past a float64 in
// a member the tool takes as it is), whose check the SDK skips.

// ParamHeader is one mirrored argument: its path of member names in the
// arguments, and the header's name after Mcp-Param-.
type ParamHeader struct {
	path   []string
	header string
}

// ParamHeaders are the arguments a tool's input schema mirrors into
// headers; none for most tools.
func ParamHeaders(inputSchema []byte) []ParamHeader {
	if !bytes.Contains(inputSchema, []byte(`"x-mcp-header"`)) {
		return nil
	}
	var root schemaNode
	if json.Unmarshal(inputSchema, &root) != nil {
		return nil
	}
	return root.paramHeaders(nil, nil)
}

// schemaNode is what a schema says of mirrored headers.
type schemaNode struct {
	Header     string                `json:"x-mcp-header"`
	Properties map[string]schemaNode `json:"properties"`
}

func (n schemaNode) paramHeaders(path []string, out []ParamHeader) []ParamHeader {
	for name, p := range n.Properties {
		at := append(append([]string(nil), path...), name)
		if p.Header != "" {
			out = append(out, ParamHeader{at, p.Header})
		}
		out = p.paramHeaders(at, out)
	}
	return out
}

// ParamHeadersMatch reports whether every mirrored argument of a call
// agrees with its header, as SEP-2243 has it: an argument absent or null
// has no header; one present has one, which (once a =?base64?…?= wrapper
// is decoded; without both ends it is literal) is the argument's text: a string as it is, true or false, or
// an integer within ±(2^53−1), compared as a number. An argument of any
// other kind matches no header.
func ParamHeadersMatch(h http.Header, mirrored []ParamHeader, args []byte) bool {
	for _, p := range mirrored {
		got := h.Get("Mcp-Param-" + p.header)
		value, present := argumentAt(args, p.path)
		if !present || string(value) == "null" {
			if got != "" {
				return false
			}
			continue
		}
		want, ok := headerText(value)
		if !ok || got == "" {
			return false
		}
		if encoded, ok := base64Wrapped(got); ok {
			b, err := base64.StdEncoding.DecodeString(encoded)
			if err != nil {
				return false
			}
			got = string(b)
		}
		if n, isInt := safeInteger(want); isInt {
			if m, ok := safeInteger(got); !ok || m != n {
				return false
			}
		} else if got != want {
			return false
		}
	}
	return true
}

// base64Wrapped is the Base64 text of a header value in SEP-2243's
// wrapper; a value without both its ends is literal.
func base64Wrapped(v string) (string, bool) {
	if len(v) < len("=?base64?")+len("?=") || !strings.HasPrefix(v, "=?base64?") || !strings.HasSuffix(v, "?=") {
		return "", false
	}
	return v[len("=?base64?") : len(v)-len("?=")], true
}

// argumentAt is the value at path in args, by exact member names.
func argumentAt(args []byte, path []string) (json.RawMessage, bool) {
	cur := json.RawMessage(args)
	for _, name := range path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		next, ok := obj[name]
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// headerText is a mirrored argument's text: a string's value, true or
// false, or a number's literal; not ok for anything else.
func headerText(v json.RawMessage) (string, bool) {
	switch v := bytes.TrimSpace(v); {
	case len(v) == 0:
		return "", false
	case v[0] == '"':
		var s string
		return s, json.Unmarshal(v, &s) == nil
	case string(v) == "true" || string(v) == "false":
		return string(v), true
	case v[0] == '-' || v[0] >= '0' && v[0] <= '9':
		_, ok := safeInteger(string(v))
		return string(v), ok // only an integer may be mirrored
	}
	return "", false
}

// safeInteger reads s as a number that is an integer within ±(2^53−1).
func safeInteger(s string) (int64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
		return 0, false
	}
	return int64(f), true
}
