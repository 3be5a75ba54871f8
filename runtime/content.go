package runtime

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/keelgen/keel/internal/toolrules"
	"github.com/keelgen/keel/runtime/wire"
)

// ContentKind is what a content block of a result is.
type ContentKind string

// The kinds of content a result may carry beside or instead of its data.
const (
	ContentImage        ContentKind = "image"         // MIMEType and Data
	ContentAudio        ContentKind = "audio"         // MIMEType and Data
	ContentResource     ContentKind = "resource"      // URI, MIMEType, and Text or Data: the resource itself
	ContentResourceLink ContentKind = "resource_link" // URI, Name, MIMEType: where the client can read it
)

// Content is one block of a result beyond its JSON data: an image, audio,
// an embedded resource or a link to one. Make it with Image, Audio,
// TextResource, BlobResource or ResourceLink. Data is written as base64.
type Content struct {
	Kind        ContentKind `json:"type"`
	MIMEType    string      `json:"mime_type"`
	Data        []byte      `json:"data,omitempty"`
	Text        string      `json:"text,omitempty"`
	URI         string      `json:"uri,omitempty"`
	Name        string      `json:"name,omitempty"`
	Description string      `json:"description,omitempty"`
}

// Image is an image of a MIME type (image/png, image/jpeg, ...).
func Image(mimeType string, data []byte) Content {
	return Content{Kind: ContentImage, MIMEType: mimeType, Data: data}
}

// Audio is a sound of a MIME type (audio/wav, audio/mpeg, ...).
func Audio(mimeType string, data []byte) Content {
	return Content{Kind: ContentAudio, MIMEType: mimeType, Data: data}
}

// TextResource is a resource embedded as text: a log excerpt, a CSV.
func TextResource(uri, mimeType, text string) Content {
	return Content{Kind: ContentResource, URI: uri, MIMEType: mimeType, Text: text}
}

// BlobResource is a resource embedded as bytes: a PDF, an archive.
func BlobResource(uri, mimeType string, data []byte) Content {
	return Content{Kind: ContentResource, URI: uri, MIMEType: mimeType, Data: data}
}

// ResourceLink points at a resource the client may read itself.
func ResourceLink(uri, name, mimeType string) Content {
	return Content{Kind: ContentResourceLink, URI: uri, Name: name, MIMEType: mimeType}
}

// WithContent is the result of a handler whose result carries content
// blocks: Data is checked against the output schema as any result is, and
// Content, in order, against the MIME types the tool declares
// (//keel:tool content=image/png,text/csv) and the executor's limits. A
// tool that only returns content has a Data of struct{}.
type WithContent[R any] struct {
	Data    R
	Content []Content
}

// blocks and data let the hand-bound path see through the wrapper.
func (w *WithContent[R]) blocks() []Content { return w.Content }
func (w *WithContent[R]) data() any         { return &w.Data }

type contentCarrier interface {
	blocks() []Content
	data() any
}

// ContentCall is a Call whose result carries content blocks: the call type
// keelgen generates for a handler that returns WithContent.
type ContentCall interface {
	wire.Call
	Content() []Content
}

// Bounds of a result's content blocks (Limits has the executor's).
const (
	// maxContentName is a resource link's name or description in bytes.
	maxContentName = 1024
	// maxContentURI is a resource's URI in bytes.
	maxContentURI = 2048
)

// checkContent checks blocks against the MIME types a tool declares and
// the limits: the first problem, for the protected log; nil when all pass.
func checkContent(blocks []Content, declared []string, lim Limits) error {
	if len(blocks) > lim.MaxContentBlocks {
		return fmt.Errorf("%d content blocks, over the limit of %d", len(blocks), lim.MaxContentBlocks)
	}
	total := 0
	for i, b := range blocks {
		if err := checkBlock(b, declared); err != nil {
			return fmt.Errorf("content block %d (%s): %w", i, b.Kind, err)
		}
		total += len(b.Data) + len(b.Text) + len(b.URI) + len(b.Name) + len(b.Description) + len(b.MIMEType)
		if total > lim.MaxContentBytes {
			return fmt.Errorf("content blocks of more than %d bytes", lim.MaxContentBytes)
		}
	}
	return nil
}

func checkBlock(b Content, declared []string) error {
	if !mimeDeclared(b.MIMEType, declared) {
		return fmt.Errorf("MIME type %q is not one the tool declares (%s)", b.MIMEType, strings.Join(declared, ", "))
	}
	switch b.Kind {
	case ContentImage, ContentAudio:
		if !strings.HasPrefix(b.MIMEType, string(b.Kind)+"/") {
			return fmt.Errorf("MIME type %q is not %s/...", b.MIMEType, b.Kind)
		}
		if len(b.Data) == 0 || b.Text != "" || b.URI != "" || b.Name != "" || b.Description != "" {
			return errors.New("wants Data and MIMEType alone")
		}
	case ContentResource:
		if (len(b.Data) == 0) == (b.Text == "") || b.Name != "" || b.Description != "" {
			return errors.New("wants a URI, a MIMEType, and Text or Data (one of them)")
		}
		if !utf8.ValidString(b.Text) {
			return errors.New("its text is not valid UTF-8")
		}
	case ContentResourceLink:
		if b.Name == "" || len(b.Data) > 0 || b.Text != "" {
			return errors.New("wants a URI, a Name and a MIMEType, and no Data or Text")
		}
		if len(b.Name) > maxContentName || len(b.Description) > maxContentName || !utf8.ValidString(b.Name) || !utf8.ValidString(b.Description) {
			return fmt.Errorf("name or description not valid UTF-8 of at most %d bytes", maxContentName)
		}
	default:
		return errors.New("not a kind of content")
	}
	if b.Kind == ContentResource || b.Kind == ContentResourceLink {
		if len(b.URI) > maxContentURI || !utf8.ValidString(b.URI) {
			return fmt.Errorf("URI not valid UTF-8 of at most %d bytes", maxContentURI)
		}
		if u, err := url.Parse(b.URI); err != nil || u.Scheme == "" {
			return errors.New("URI is not absolute")
		}
	}
	return nil
}

// mimeDeclared reports whether mimeType is one of declared: exactly, or
// under a declared "type/*". Both of its names are RFC 6838 restricted
// names, so a type under a family carries no control byte, no parameter,
// no byte outside ASCII, and at most 127 bytes a name.
func mimeDeclared(mimeType string, declared []string) bool {
	top, sub, ok := strings.Cut(mimeType, "/")
	if !ok || !toolrules.RestrictedName(top) || !toolrules.RestrictedName(sub) {
		return false
	}
	for _, d := range declared {
		if d == mimeType || strings.HasSuffix(d, "/*") && d[:len(d)-1] == top+"/" {
			return true
		}
	}
	return false
}
