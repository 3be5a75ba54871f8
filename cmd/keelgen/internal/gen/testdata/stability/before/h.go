// Package h is the before of the diff-stability test: two tools sharing a
// type with two schemas.
package h

import "context"

// Text is a string that each place constrains in its own way.
type Text string

// FindArgs are a search.
type FindArgs struct {
	// Query is what to look for.
	Query Text `json:"query" jsonschema:"minLength=1"`
	// Limit caps the results.
	Limit int `json:"limit,omitempty" jsonschema:"minimum=1,maximum=100"`
	// Cursor continues a search.
	Cursor string `json:"cursor,omitempty"`
	// Exact asks for exact matches.
	Exact bool `json:"exact,omitempty"`
}

// Found is what a search found.
type Found struct {
	// Titles are the matches.
	Titles []string `json:"titles"`
}

// Find searches.
//
//keel:tool name=find version=1.0 effect=read
func Find(ctx context.Context, a FindArgs) (Found, error) { return Found{Titles: []string{}}, nil }

// NoteArgs are a note.
type NoteArgs struct {
	// Body is the note.
	Body Text `json:"body" jsonschema:"maxLength=500"`
}

// Saved is a saved note.
type Saved struct {
	// ID identifies it.
	ID string `json:"id"`
	// Summary sums it up.
	Summary Text `json:"summary" jsonschema:"maxLength=80"`
	// Body is the note as saved.
	Body Text `json:"body" jsonschema:"maxLength=500"`
}

// Note saves a note.
//
//keel:tool name=note version=1.0 effect=write
func Note(ctx context.Context, a NoteArgs) (Saved, error) { return Saved{ID: "1", Body: a.Body}, nil }
