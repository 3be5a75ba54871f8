// Package conformance is a tool set that uses every schema keyword keel's
// generated checks support, for the differential test of those checks
// against the JSON Schema validator (conformance_test.go) and for the
// benchmarks of large arguments. Its tools do nothing useful: each returns
// what it was given, so that both the readers and the writers are tested.
package conformance

//go:generate go tool keelgen -out generated

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/invopop/jsonschema"
	"github.com/shopspring/decimal"
)

// decimal.Decimal has JSON methods of its own, and its JSON form is its text
// form; keel cannot know that from its methods, so the package says so.
//
//keel:text github.com/shopspring/decimal.Decimal pattern=^-?[0-9]+(\.[0-9]+)?$

// StringArgs checks strings.
type StringArgs struct {
	// Code is 2 to 5 characters, counted in code points.
	Code string `json:"code" jsonschema:"minLength=2,maxLength=5"`
	// Word is lower-case letters only.
	Word string `json:"word,omitempty" jsonschema:"pattern=^[a-z]+$"`
	// Digit contains a digit somewhere.
	Digit string `json:"digit,omitempty" jsonschema:"pattern=[0-9]"`
	// Color is red or green.
	Color string `json:"color,omitempty" jsonschema:"enum=red,enum=green"`
	// Version is always v1.
	Version Version `json:"version,omitempty"`
	// When is an RFC 3339 date-time.
	When string `json:"when,omitempty" jsonschema:"format=date-time"`
	// Day is a date.
	Day string `json:"day,omitempty" jsonschema:"format=date"`
	// Clock is a time of day.
	Clock string `json:"clock,omitempty" jsonschema:"format=time"`
	// Mail is an email address.
	Mail string `json:"mail,omitempty" jsonschema:"format=email"`
	// Link is an absolute URI.
	Link string `json:"link,omitempty" jsonschema:"format=uri"`
	// ID is a UUID.
	ID string `json:"id,omitempty" jsonschema:"format=uuid"`
	// V4 is an IPv4 address.
	V4 string `json:"v4,omitempty" jsonschema:"format=ipv4"`
	// V6 is an IPv6 address.
	V6 string `json:"v6,omitempty" jsonschema:"format=ipv6"`
	// Host is a host name.
	Host string `json:"host,omitempty" jsonschema:"format=hostname"`
	// Stamp is a date-time read into a time.Time.
	Stamp time.Time `json:"stamp,omitzero"`
}

// Version is a constant.
type Version string

// JSONSchema makes Version a const.
func (Version) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Const: "v1", Description: "The version, v1."}
}

// Strings returns its arguments.
//
//keel:tool name=strings version=1.0 effect=read
func Strings(ctx context.Context, args StringArgs) (StringArgs, error) {
	Calls.Add(1)
	return args, nil
}

// NumberArgs checks numbers. Optional numbers are omitzero: json v2
// writes a zero under omitempty, which the bounds would refuse.
type NumberArgs struct {
	// Ratio lies strictly between 0 and 1.
	Ratio float64 `json:"ratio" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1"`
	// Amount is positive.
	Amount float64 `json:"amount,omitzero" jsonschema:"exclusiveMinimum=0"`
	// Price is from 0.1 to 99.9, bounds a float cannot hold exactly.
	Price float64 `json:"price,omitzero" jsonschema:"minimum=0.1,maximum=99.9"`
	// Step is a multiple of 0.25.
	Step float64 `json:"step,omitzero" jsonschema:"multipleOf=0.25"`
	// Count is 1 to 10.
	Count int `json:"count,omitzero" jsonschema:"minimum=1,maximum=10"`
	// Small fits in an int8.
	Small int8 `json:"small,omitzero"`
	// Even is a multiple of 2.
	Even int64 `json:"even,omitzero" jsonschema:"multipleOf=2"`
	// Size is below 1000.
	Size uint16 `json:"size,omitzero" jsonschema:"exclusiveMaximum=1000"`
	// Level is 1, 2 or 3.
	Level int `json:"level,omitzero" jsonschema:"enum=1,enum=2,enum=3"`
	// Gain is at most 2.5.
	Gain float32 `json:"gain,omitzero" jsonschema:"maximum=2.5"`
	// Half is 0.5 or 1.5.
	Half float64 `json:"half,omitzero" jsonschema:"enum=0.5,enum=1.5"`
	// Flag is a boolean.
	Flag bool `json:"flag,omitzero"`
}

// Numbers returns its arguments.
//
//keel:tool name=numbers version=1.0 effect=read
func Numbers(ctx context.Context, args NumberArgs) (NumberArgs, error) {
	Calls.Add(1)
	return args, nil
}

// CollectionArgs checks arrays, maps, nested objects, pointers and values
// whose JSON form a library type decides.
type CollectionArgs struct {
	// Tags are 1 to 4 distinct tags.
	Tags []string `json:"tags" jsonschema:"minItems=1,maxItems=4,uniqueItems=true"`
	// Scores are any integers.
	Scores []int `json:"scores,omitempty"`
	// Labels map names to text.
	Labels map[string]string `json:"labels,omitempty"`
	// Shares map names to percentages.
	Shares map[string]Percent `json:"shares,omitempty"`
	// Items are nested objects.
	Items []Item `json:"items,omitempty"`
	// Note may be null.
	Note *Note `json:"note,omitempty"`
	// Since is an optional date-time.
	Since *time.Time `json:"since,omitempty"`
	// Extra is any JSON value.
	Extra json.RawMessage `json:"extra,omitempty"`
	Paging
}

// Paging is embedded: its members are the parent's.
type Paging struct {
	// Page is the page number.
	Page int `json:"page,omitzero" jsonschema:"minimum=1"`
}

// Percent is 0 to 100.
type Percent int

// JSONSchema bounds Percent.
func (Percent) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Minimum: "0", Maximum: "100", Description: "A percentage."}
}

// Note is text that may be null.
type Note string

// JSONSchema lets a Note be null.
func (Note) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Extras: map[string]any{"type": []string{"string", "null"}}, Description: "A note, or null."}
}

// Item is one nested object.
type Item struct {
	// Name names the item.
	Name string `json:"name" jsonschema:"minLength=1"`
	// Weight is at least 0.
	Weight float64 `json:"weight,omitzero" jsonschema:"minimum=0"`
}

// Collections returns its arguments.
//
//keel:tool name=collections version=1.0 effect=read
func Collections(ctx context.Context, args CollectionArgs) (CollectionArgs, error) {
	Calls.Add(1)
	return args, nil
}

// Row is one row of a batch.
type Row struct {
	// ID is a row id, such as R-001.
	ID string `json:"id" jsonschema:"pattern=^R-[0-9][0-9][0-9]+$"`
	// N is 0 to 1000.
	N int `json:"n" jsonschema:"minimum=0,maximum=1000"`
	// Text is free text.
	Text string `json:"text"`
}

// BatchArgs is a large argument.
type BatchArgs struct {
	// Rows are the rows.
	Rows []Row `json:"rows"`
}

// Count is how many rows a batch had.
type Count struct {
	// Rows is the number of rows.
	Rows int `json:"rows"`
}

// Batch counts rows: its arguments may be large, its result is small.
//
//keel:tool name=batch version=1.0 effect=read
func Batch(ctx context.Context, args BatchArgs) (Count, error) {
	Calls.Add(1)
	return Count{Rows: len(args.Rows)}, nil
}

// Calls counts handler runs, so tests can see that a refused call ran none.
var Calls atomic.Int64

// ProbeArgs has the shape the hostile catalog (internal/testing/hostile) attacks.
type ProbeArgs struct {
	// IncidentID is an incident's id, such as INC-001.
	IncidentID string `json:"incident_id" jsonschema:"pattern=^INC-[0-9][0-9][0-9]+$"`
	// Count is any int.
	Count int `json:"count,omitzero"`
	// Small fits in an int8.
	Small int8 `json:"small,omitzero"`
	// Ratio is any number.
	Ratio float64 `json:"ratio,omitzero"`
}

// Probe returns its arguments.
//
//keel:tool name=probe version=1.1 effect=read
func Probe(ctx context.Context, args ProbeArgs) (ProbeArgs, error) {
	Calls.Add(1)
	return args, nil
}

// TextArgs holds values whose JSON form is the text their own type writes.
type TextArgs struct {
	// ID is a UUID, read by uuid.UUID's UnmarshalText.
	ID uuid.UUID `json:"id"`
	// Addr is an IP address.
	Addr netip.Addr `json:"addr,omitzero"`
	// Net is a network prefix.
	Net *netip.Prefix `json:"net,omitempty"`
	// Hosts are addresses too.
	Hosts []netip.Addr `json:"hosts,omitempty"`
	// Level is one of this package's own text values, at most 6 characters.
	Level Level `json:"level,omitzero" jsonschema:"maxLength=6"`
	// Blob is bytes, as base64 text of at most 16 characters.
	Blob []byte `json:"blob,omitempty" jsonschema:"maxLength=16"`
	// Wait is how long to wait, such as 2s.
	Wait time.Duration `json:"wait,omitzero"`
	// Price is a decimal number of another module's type, such as 12.50.
	Price *decimal.Decimal `json:"price,omitempty"`
	// Owners maps a team to its owner's UUID.
	Owners map[string]uuid.UUID `json:"owners,omitempty"`
}

// Level is a text type of this package: low or high, in any case.
type Level int

// MarshalText writes low or high.
func (l Level) MarshalText() ([]byte, error) {
	switch l {
	case 1:
		return []byte("low"), nil
	case 2:
		return []byte("high"), nil
	}
	return nil, errors.New("no such level")
}

// UnmarshalText reads low or high, in any case.
func (l *Level) UnmarshalText(b []byte) error {
	switch strings.ToLower(string(b)) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return errors.New("no such level: " + string(b))
	}
	return nil
}

// Texts returns its arguments.
//
//keel:tool name=texts version=1.4 effect=read
func Texts(ctx context.Context, args TextArgs) (TextArgs, error) {
	Calls.Add(1)
	return args, nil
}

// InventoryArgs ask for up to three pods.
type InventoryArgs struct {
	// Pods is how many pods to list.
	Pods int `json:"pods,omitzero" jsonschema:"minimum=0,maximum=3"`
}

// Inventory is what an idiomatic Go handler returns when it found nothing:
// nil slices and maps, required and optional alike.
type Inventory struct {
	// Pods are the pods found.
	Pods []Pod `json:"pods"`
	// Labels are the namespace's labels.
	Labels map[string]string `json:"labels"`
	// Digest is the listing's hash.
	Digest []byte `json:"digest"`
	// Notes are remarks, if any.
	Notes []string `json:"notes,omitempty"`
	// Owners map teams to people.
	Owners map[string][]string `json:"owners,omitzero"`
}

// Pod is one listed pod; its labels are nil.
type Pod struct {
	// Name is the pod's name.
	Name string `json:"name"`
	// Labels are the pod's labels.
	Labels map[string]string `json:"labels"`
	// Ports are the ports it listens on.
	Ports []int `json:"ports"`
}

// ListInventory lists pods whose collections were never filled.
//
//keel:tool name=inventory version=1.0 effect=read
func ListInventory(ctx context.Context, args InventoryArgs) (Inventory, error) {
	var inv Inventory
	for i := range args.Pods {
		inv.Pods = append(inv.Pods, Pod{Name: "pod-" + string(rune('a'+i))})
	}
	return inv, nil
}

// Condition is a filter: a comparison, or all, any or none of conditions;
// a type that contains itself, whose schema is in $defs.
type Condition struct {
	// Field is the field a comparison reads.
	Field string `json:"field,omitempty" jsonschema:"maxLength=64"`
	// Equals is the value it must equal.
	Equals string `json:"equals,omitempty"`
	// All must all hold.
	All []Condition `json:"all,omitempty" jsonschema:"maxItems=4"`
	// Any must hold, one at least.
	Any []Condition `json:"any,omitempty"`
	// Not must not hold.
	Not *Condition `json:"not,omitempty"`
}

// QueryArgs hold a recursive condition.
type QueryArgs struct {
	// Where is the condition.
	Where Condition `json:"where"`
	// Loop makes the result a cycle, which no JSON can write.
	Loop bool `json:"loop,omitzero"`
}

// Query returns its arguments, or, asked to loop, a condition that
// contains itself.
//
//keel:tool name=query version=1.0 effect=read
func Query(ctx context.Context, args QueryArgs) (QueryArgs, error) {
	Calls.Add(1)
	if args.Loop {
		args.Where.Not = &args.Where
	}
	return args, nil
}

// Graph is each node's links: a map of itself.
type Graph map[string]Graph

// Nesting is a list of lists: a slice of itself.
type Nesting []Nesting

// Edge links two nodes.
type Edge struct {
	// From is the node the edge leaves.
	From string `json:"from" jsonschema:"maxLength=16"`
	// To is the node it reaches.
	To string `json:"to" jsonschema:"maxLength=16"`
}

// LinkArgs are the edges to link.
type LinkArgs struct {
	// Edges are the links, in order.
	Edges []Edge `json:"edges" jsonschema:"maxItems=16"`
	// Nest makes the nesting a list that holds itself.
	Nest bool `json:"nest,omitzero"`
}

// Links are the graph the edges make and a nesting.
type Links struct {
	// Graph maps each node to the nodes it links to, and theirs.
	Graph Graph `json:"graph"`
	// Nesting is a list of lists.
	Nesting Nesting `json:"nesting"`
}

// LinkNodes builds a graph from edges, as a handler that links what the
// model sends does: an edge back to a node makes a cycle.
//
//keel:tool name=link_nodes version=1.0 effect=read
func LinkNodes(ctx context.Context, args LinkArgs) (Links, error) {
	Calls.Add(1)
	g := Graph{}
	for _, e := range args.Edges {
		if g[e.From] == nil {
			g[e.From] = Graph{}
		}
		if g[e.To] == nil {
			g[e.To] = Graph{}
		}
		g[e.From][e.To] = g[e.To]
	}
	n := Nesting{}
	if args.Nest {
		n = make(Nesting, 1)
		n[0] = n
	}
	return Links{Graph: g, Nesting: n}, nil
}

// PickArgs name a datasource by exactly one of its uid, its name, or its
// org and slug together, and annotate it with a title, tags, or both, and
// perhaps a note.
type PickArgs struct {
	// UID is the datasource's uid.
	UID string `json:"uid,omitempty" jsonschema:"oneof_required=by_uid,maxLength=40"`
	// Name is its name.
	Name *string `json:"name,omitempty" jsonschema:"oneof_required=by_name"`
	// Org is its organisation, named with slug.
	Org int `json:"org,omitzero" jsonschema:"oneof_required=by_slug,minimum=1"`
	// Slug is its slug in the organisation.
	Slug string `json:"slug,omitempty" jsonschema:"oneof_required=by_slug"`
	// Title is a title to set.
	Title string `json:"title,omitempty" jsonschema:"anyof_required=title"`
	// Tags are tags to add.
	Tags []string `json:"tags,omitempty" jsonschema:"anyof_required=tags,maxItems=4"`
	// Note is a note to leave, signed by author.
	Note string `json:"note,omitempty"`
	// Author signs the note; a reviewer needs an author too.
	Author string `json:"author,omitempty"`
	// Reviewer reviews the note.
	Reviewer *string `json:"reviewer,omitempty"`
	// At is where to pin the note: a longitude and a latitude.
	At [2]float64 `json:"at,omitzero" jsonschema:"minimum=-180,maximum=180"`
	// Codes are three distinct short codes.
	Codes *[3]string `json:"codes,omitempty" jsonschema:"uniqueItems=true,maxLength=4"`
	// Window is how far back to look, from a minute to a week.
	Window time.Duration `json:"window,omitzero" jsonschema_extras:"formatMinimum=1m,formatMaximum=168h"`
	// Threshold is a non-negative value below a million.
	Threshold *decimal.Decimal `json:"threshold,omitempty" jsonschema_extras:"formatMinimum=0,formatExclusiveMaximum=1e6"`
	// Readings are up to three readings, each [seconds, label].
	Readings []Reading `json:"readings,omitempty" jsonschema:"maxItems=3"`
}

// Reading is a time and its label, written [seconds, label].
//
//keel:tuple
type Reading struct {
	// Seconds since the start.
	At float64 `jsonschema:"minimum=0"`
	// Label names the reading.
	Label string `jsonschema:"maxLength=8"`
}

// JSONSchemaExtend says what a member needs beside it: a note its author,
// a reviewer the note and its author.
func (PickArgs) JSONSchemaExtend(s *jsonschema.Schema) {
	s.DependentRequired = map[string][]string{"note": {"author"}, "reviewer": {"note", "author"}}
}

// Picked says which way the datasource was named.
type Picked struct {
	// By names the way the datasource was named: by_uid, by_name or by_slug.
	By string `json:"by"`
	// Readings are the readings given, as given.
	Readings []Reading `json:"readings"`
}

// Pick says which way its arguments name the datasource. (Alternatives are
// checked on arguments only, so it does not echo them.)
//
//keel:tool name=pick version=1.0 effect=read
func Pick(ctx context.Context, args PickArgs) (Picked, error) {
	Calls.Add(1)
	p := Picked{By: "by_slug", Readings: args.Readings}
	switch {
	case args.UID != "":
		p.By = "by_uid"
	case args.Name != nil:
		p.By = "by_name"
	}
	return p, nil
}
