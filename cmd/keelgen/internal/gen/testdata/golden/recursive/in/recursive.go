package recursive

import "context"

// Address is where someone lives.
type Address struct {
	// Street is the street and number.
	Street string `json:"street"`
	// City is the city.
	City string `json:"city"`
	// Previous is the address before this one, if the person moved.
	Previous *Address `json:"previous,omitempty"`
}

// Person is someone with an address.
type Person struct {
	// Name is the person's name.
	Name string `json:"name"`
	// Address is where they live.
	Address Address `json:"address"`
	// Filter narrows the search.
	Filter *Filter `json:"filter,omitempty"`
}

// Filter is a condition, or a combination of them.
type Filter struct {
	// Field is the field a leaf compares.
	Field string `json:"field,omitempty"`
	// Equals is the value it must equal.
	Equals string `json:"equals,omitempty"`
	// All must all hold.
	All []Filter `json:"all,omitempty" jsonschema:"maxItems=8"`
	// Not must not hold.
	Not *Filter `json:"not,omitempty"`
}

// Register registers a person.
//
//keel:tool name=register version=1.0 effect=read
func Register(ctx context.Context, p Person) (Address, error) { return p.Address, nil }
