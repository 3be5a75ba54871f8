package ask

import (
	"context"
	"net/url"

	jsonv2 "github.com/go-json-experiment/json"
)

// Root is one of the client's roots: a file:// URI and its name.
type Root struct {
	URI  string
	Name string
}

// ListRoots asks the client for its roots under key. Before the answer
// came it returns ErrAsked; an answer that is no list of file:// roots is
// asked for again.
func ListRoots(ctx context.Context, key string) ([]Root, error) {
	req := func() Request { return Request{Method: MethodRoots, Params: []byte(`{}`)} }
	raw, err := answer(ctx, key, Roots, req)
	if err != nil {
		return nil, err
	}
	var res struct {
		Roots []struct {
			URI  string `json:"uri"`
			Name string `json:"name"`
		} `json:"roots"`
	}
	if jsonv2.Unmarshal(raw, &res) != nil || res.Roots == nil {
		return nil, again(ctx, key, req())
	}
	roots := make([]Root, 0, len(res.Roots))
	for _, r := range res.Roots {
		if u, err := url.Parse(r.URI); err != nil || u.Scheme != "file" {
			return nil, again(ctx, key, req())
		}
		roots = append(roots, Root{URI: r.URI, Name: r.Name})
	}
	return roots, nil
}
