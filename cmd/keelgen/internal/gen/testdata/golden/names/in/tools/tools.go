// Package tools is a handler package whose name the generated code also uses.
package tools

import (
	"context"
	"errors"
)

// Item is a type name every package here declares.
type Item struct {
	// Name is the item's name.
	Name string `json:"name"`
	// Tags are its tags.
	Tags []string `json:"tags,omitempty"`
}

// Find returns the item it is given, or the error a name asks for.
//
//keel:tool name=tools_find version=1.0 effect=read
func Find(ctx context.Context, item Item) (Item, error) {
	if item.Name == "" {
		return Item{}, errors.New("empty")
	}
	return item, nil
}

// Put stores a note.
//
//keel:tool name=tools_put version=1.0 effect=write
func Put(ctx context.Context, note string, count int) (Item, error) {
	return Item{Name: note}, nil
}
