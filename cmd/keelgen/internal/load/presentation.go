package load

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"go/ast"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/keelgen/keel/cmd/keelgen/internal/model"
	"github.com/keelgen/keel/runtime"
)

// How a tool presents itself to an MCP client beyond its words: its icons
// (//keel:icon) and static _meta entries (//keel:meta), checked here so a
// client is never handed a link or a value keel would not stand behind.
const (
	iconPrefix = "//keel:icon"
	metaPrefix = "//keel:meta"

	maxIcons     = 8
	maxIconData  = 16 << 10 // bytes of a data: icon, decoded
	maxIconURL   = 2048
	maxMeta      = 8
	maxMetaValue = 4 << 10 // bytes of one _meta value's JSON
)

func isIcon(text string) bool { return isKeyword(text, iconPrefix) }
func isMeta(text string) bool { return isKeyword(text, metaPrefix) }

var (
	// mimeRule is an image MIME type: image/ and a token (RFC 6838).
	mimeRule = regexp.MustCompile(`^image/[a-zA-Z0-9][a-zA-Z0-9!#$&^_.+-]{0,126}$`)
	// sizeRule is one of MCP's icon sizes: WIDTHxHEIGHT, or any.
	sizeRule = regexp.MustCompile(`^([1-9][0-9]{0,4}x[1-9][0-9]{0,4}|any)$`)
	// metaKeyRule is an MCP _meta key: an optional prefix of dot-separated
	// labels and a slash, then a name of letters and digits with -, _ and .
	// inside.
	metaKeyRule = regexp.MustCompile(`^([a-zA-Z]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*/)?[a-zA-Z0-9]([a-zA-Z0-9._-]{0,62}[a-zA-Z0-9])?$`)
)

// presentation gives t its icons and _meta entries, in the order written,
// or reports each problem at its line.
func (l *loader) presentation(t *model.Tool, icons, metas []*ast.Comment) bool {
	ok := true
	fail := func(c *ast.Comment, format string, args ...any) {
		l.errorf(c.Pos(), "%s: %s", t.Name, fmt.Sprintf(format, args...))
		ok = false
	}
	for i, c := range icons {
		if i == maxIcons {
			fail(c, "//keel:icon: at most %d icons", maxIcons)
			break
		}
		icon, problem := parseIcon(strings.TrimSpace(c.Text[len(iconPrefix):]))
		if problem != "" {
			fail(c, "//keel:icon: %s", problem)
			continue
		}
		t.Icons = append(t.Icons, icon)
	}
	for i, c := range metas {
		if i == maxMeta {
			fail(c, "//keel:meta: at most %d entries", maxMeta)
			break
		}
		key, value, problem := parseMeta(strings.TrimSpace(c.Text[len(metaPrefix):]))
		switch {
		case problem != "":
			fail(c, "//keel:meta: %s", problem)
		case t.Meta[key] != nil:
			fail(c, "//keel:meta: key %q is given twice", key)
		default:
			if t.Meta == nil {
				t.Meta = map[string]json.RawMessage{}
			}
			t.Meta[key] = value
		}
	}
	return ok
}

// parseIcon reads "src=URL mime=image/png sizes=48x48,any theme=dark".
func parseIcon(text string) (runtime.Icon, string) {
	var icon runtime.Icon
	pairs, problems := keyValues(strings.Fields(text), "")
	if len(problems) > 0 {
		return icon, problems[0]
	}
	for _, kv := range pairs {
		switch kv.key {
		case "src":
			if p := iconSource(kv.value); p != "" {
				return icon, p
			}
			icon.Src = kv.value
		case "mime":
			if !mimeRule.MatchString(kv.value) {
				return icon, fmt.Sprintf("mime %q is not an image MIME type, such as image/png or image/svg+xml", kv.value)
			}
			icon.MIMEType = kv.value
		case "sizes":
			for _, s := range strings.Split(kv.value, ",") {
				if !sizeRule.MatchString(s) {
					return icon, fmt.Sprintf("size %q is not WIDTHxHEIGHT (48x48) or any", s)
				}
				if slices.Contains(icon.Sizes, s) {
					return icon, fmt.Sprintf("size %q is given twice", s)
				}
				icon.Sizes = append(icon.Sizes, s)
			}
		case "theme":
			if kv.value != "light" && kv.value != "dark" {
				return icon, fmt.Sprintf("theme %q must be light or dark (the background the icon is drawn for)", kv.value)
			}
			icon.Theme = kv.value
		default:
			return icon, fmt.Sprintf("unknown key %q (keys are src, mime, sizes, theme)", kv.key)
		}
	}
	if icon.Src == "" {
		return icon, "missing required key \"src\" (an https URL or a data: URI)"
	}
	return icon, ""
}

// iconSource says why src is no icon a client should load: keel takes an
// https URL without credentials, or a base64 data: URI of an image.
func iconSource(src string) string {
	if len(src) > maxIconURL && !strings.HasPrefix(src, "data:") {
		return fmt.Sprintf("src is %d bytes; a URL is at most %d", len(src), maxIconURL)
	}
	if rest, ok := strings.CutPrefix(src, "data:"); ok {
		mime, data, ok := strings.Cut(rest, ";base64,")
		if !ok || !mimeRule.MatchString(mime) {
			return "a data: src is data:image/TYPE;base64,DATA"
		}
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return "a data: src's data is not base64"
		}
		if len(b) > maxIconData {
			return fmt.Sprintf("a data: icon is %d bytes; at most %d (link a larger one)", len(b), maxIconData)
		}
		return ""
	}
	u, err := url.Parse(src)
	switch {
	case err != nil || u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		return fmt.Sprintf("src %q is not an https URL or a data: URI", src)
	case u.User != nil:
		return "src carries credentials; an icon's URL is public"
	}
	return ""
}

// parseMeta reads "key=JSON": a _meta key keel does not reserve, and a JSON
// value, compacted.
func parseMeta(text string) (string, json.RawMessage, string) {
	key, value, ok := strings.Cut(text, "=")
	switch {
	case !ok || key == "":
		return "", nil, "write //keel:meta KEY=JSON, such as ui={\"resourceUri\":\"ui://issues/form\"}"
	case !metaKeyRule.MatchString(key):
		return "", nil, fmt.Sprintf("key %q is not an MCP _meta key (an optional prefix such as com.example/, then letters, digits, -, _ and .)", key)
	case reservedMetaKey(key):
		return "", nil, fmt.Sprintf("key %q is reserved: MCP keeps prefixes with a modelcontextprotocol or mcp label, and keel io.keelgen/", key)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(value)); err != nil {
		return "", nil, fmt.Sprintf("the value of %q is not JSON", key)
	}
	if buf.Len() > maxMetaValue {
		return "", nil, fmt.Sprintf("the value of %q is %d bytes; at most %d", key, buf.Len(), maxMetaValue)
	}
	return key, json.RawMessage(buf.Bytes()), ""
}

// reservedMetaKey reports whether key's prefix is MCP's (a label
// modelcontextprotocol or mcp) or keel's own (io.keelgen/).
func reservedMetaKey(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	labels := strings.Split(prefix, ".")
	return prefix == "io.keelgen" || slices.Contains(labels, "modelcontextprotocol") || slices.Contains(labels, "mcp")
}
