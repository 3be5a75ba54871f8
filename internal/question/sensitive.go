package question

// A member the input schema marks writeOnly (JSON Schema's word for a
// value sent but never shown back: a password, a card number) is
// sensitive: the question shows that it is set, and its length, never its
// value.

// Schema is what the question reads of the input schema, at one place in
// the arguments: the caller reads the document (through the schema model,
// its $refs resolved) and answers for each place.
type Schema interface {
	// Member is the subschema of the member name; nil when the schema
	// says nothing of it.
	Member(name string) Schema
	// Items is the subschema of a list's items; nil likewise.
	Items() Schema
	// Sensitive reports whether the value here is marked writeOnly.
	Sensitive() bool
}

func member(s Schema, name string) Schema {
	if s == nil {
		return nil
	}
	return s.Member(name)
}

func items(s Schema) Schema {
	if s == nil {
		return nil
	}
	return s.Items()
}

func sensitive(s Schema) bool { return s != nil && s.Sensitive() }
