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

	"github.com/keelgen/keel/runtime/wire"
)

// decimal.Decimal has JSON methods of its own, and its JSON form is its text
// form; keel cannot know that from its methods, so the package says so.
//
//keel:text github.com/shopspring/decimal.Decimal pattern=^-?[0-9]+(\.[0-9]+)?$

// Checks strings.
type StringArgs struct {
	// 2 to 5 characters, counted in code points.
	Code string `json:"code" jsonschema:"minLength=2,maxLength=5"`
	// Lower-case letters only.
	Word string `json:"word,omitempty" jsonschema:"pattern=^[a-z]+$"`
	// Contains a digit somewhere.
	Digit string `json:"digit,omitempty" jsonschema:"pattern=[0-9]"`
	// No white space, as ECMA-262 (JSON Schema's patterns) counts it: a
	// no-break or an em space too.
	Handle string `json:"handle,omitempty" jsonschema:"pattern=^\\S+$"`
	// Red or green.
	Color string `json:"color,omitempty" jsonschema:"enum=red,enum=green"`
	// Always v1.
	Version Version `json:"version,omitempty"`
	// An RFC 3339 date-time.
	When string `json:"when,omitempty" jsonschema:"format=date-time"`
	// A date.
	Day string `json:"day,omitempty" jsonschema:"format=date"`
	// A time of day.
	Clock string `json:"clock,omitempty" jsonschema:"format=time"`
	// An email address.
	Mail string `json:"mail,omitempty" jsonschema:"format=email"`
	// An absolute URI.
	Link string `json:"link,omitempty" jsonschema:"format=uri"`
	// A UUID.
	ID string `json:"id,omitempty" jsonschema:"format=uuid"`
	// An IPv4 address.
	V4 string `json:"v4,omitempty" jsonschema:"format=ipv4"`
	// An IPv6 address.
	V6 string `json:"v6,omitempty" jsonschema:"format=ipv6"`
	// A host name.
	Host string `json:"host,omitempty" jsonschema:"format=hostname"`
	// A date-time read into a time.Time.
	Stamp time.Time `json:"stamp,omitzero"`
}

// JSONSchemaExtend reserves a host name: not localhost (not over an enum).
func (StringArgs) JSONSchemaExtend(s *jsonschema.Schema) {
	host, _ := s.Properties.Get("host")
	host.Not = &jsonschema.Schema{Enum: []any{"localhost"}}
}

// Version is a constant.
type Version string

// JSONSchema makes Version a const.
func (Version) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Const: "v1", Description: "The version, v1."}
}

// Returns its arguments.
//
//keel:tool name=strings version=2.1 effect=read
func Strings(ctx context.Context, args StringArgs) (StringArgs, error) {
	Calls.Add(1)
	return args, nil
}

// Checks numbers. Optional numbers are omitzero: json v2
// writes a zero under omitempty, which the bounds would refuse.
type NumberArgs struct {
	// Lies strictly between 0 and 1.
	Ratio float64 `json:"ratio" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1"`
	// Positive.
	Amount float64 `json:"amount,omitzero" jsonschema:"exclusiveMinimum=0"`
	// From 0.1 to 99.9, bounds a float cannot hold exactly.
	Price float64 `json:"price,omitzero" jsonschema:"minimum=0.1,maximum=99.9"`
	// A multiple of 0.25.
	Step float64 `json:"step,omitzero" jsonschema:"multipleOf=0.25"`
	// 1 to 10.
	Count int `json:"count,omitzero" jsonschema:"minimum=1,maximum=10"`
	// Fits in an int8.
	Small int8 `json:"small,omitzero"`
	// A multiple of 2.
	Even int64 `json:"even,omitzero" jsonschema:"multipleOf=2"`
	// Below 1000.
	Size uint16 `json:"size,omitzero" jsonschema:"exclusiveMaximum=1000"`
	// 1, 2 or 3.
	Level int `json:"level,omitzero" jsonschema:"enum=1,enum=2,enum=3"`
	// At most 2.5.
	Gain float32 `json:"gain,omitzero" jsonschema:"maximum=2.5"`
	// 0.5 or 1.5.
	Half float64 `json:"half,omitzero" jsonschema:"enum=0.5,enum=1.5"`
	// A boolean.
	Flag bool `json:"flag,omitzero"`
}

// Returns its arguments.
//
//keel:tool name=numbers version=1.0 effect=read
func Numbers(ctx context.Context, args NumberArgs) (NumberArgs, error) {
	Calls.Add(1)
	return args, nil
}

// Checks arrays, maps, nested objects, pointers and values
// whose JSON form a library type decides.
type CollectionArgs struct {
	// 1 to 4 distinct tags.
	Tags []string `json:"tags" jsonschema:"minItems=1,maxItems=4,uniqueItems=true"`
	// Any integers.
	Scores []int `json:"scores,omitempty"`
	// Map names to text.
	Labels map[string]string `json:"labels,omitempty"`
	// Map names to percentages.
	Shares map[string]Percent `json:"shares,omitempty"`
	// Nested objects.
	Items []Item `json:"items,omitempty"`
	// May be null.
	Note *Note `json:"note,omitempty"`
	// An optional date-time.
	Since *time.Time `json:"since,omitempty"`
	// Any JSON value.
	Extra json.RawMessage `json:"extra,omitempty"`
	Paging
}

// Paging is embedded: its members are the parent's.
type Paging struct {
	// The page number.
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

// One nested object.
type Item struct {
	// Names the item.
	Name string `json:"name" jsonschema:"minLength=1"`
	// At least 0.
	Weight float64 `json:"weight,omitzero" jsonschema:"minimum=0"`
}

// Returns its arguments.
//
//keel:tool name=collections version=1.0 effect=read
func Collections(ctx context.Context, args CollectionArgs) (CollectionArgs, error) {
	Calls.Add(1)
	return args, nil
}

// One row of a batch.
type Row struct {
	// A row id, such as R-001.
	ID string `json:"id" jsonschema:"pattern=^R-[0-9][0-9][0-9]+$"`
	// 0 to 1000.
	N int `json:"n" jsonschema:"minimum=0,maximum=1000"`
	// Free text.
	Text string `json:"text"`
}

// BatchArgs is a large argument.
type BatchArgs struct {
	// The rows.
	Rows []Row `json:"rows"`
}

// How many rows a batch had.
type Count struct {
	// The number of rows.
	Rows int `json:"rows"`
}

// Counts rows: its arguments may be large, its result is small.
//
//keel:tool name=batch version=1.0 effect=read
func Batch(ctx context.Context, args BatchArgs) (Count, error) {
	Calls.Add(1)
	return Count{Rows: len(args.Rows)}, nil
}

// Calls counts handler runs, so tests can see that a refused call ran none.
var Calls atomic.Int64

// Has the shape the hostile catalog (internal/testing/hostile) attacks.
type ProbeArgs struct {
	// An incident's id, such as INC-001.
	IncidentID string `json:"incident_id" jsonschema:"pattern=^INC-[0-9][0-9][0-9]+$"`
	// Any int.
	Count int `json:"count,omitzero"`
	// Fits in an int8.
	Small int8 `json:"small,omitzero"`
	// Any number.
	Ratio float64 `json:"ratio,omitzero"`
}

// Returns its arguments.
//
//keel:tool name=probe version=1.1 effect=read
func Probe(ctx context.Context, args ProbeArgs) (ProbeArgs, error) {
	Calls.Add(1)
	return args, nil
}

// Holds values whose JSON form is the text their own type writes.
type TextArgs struct {
	// A UUID, read by uuid.UUID's UnmarshalText.
	ID uuid.UUID `json:"id"`
	// An IP address.
	Addr netip.Addr `json:"addr,omitzero"`
	// A network prefix.
	Net *netip.Prefix `json:"net,omitempty"`
	// Addresses too.
	Hosts []netip.Addr `json:"hosts,omitempty"`
	// One of this package's own text values, at most 6 characters.
	Level Level `json:"level,omitzero" jsonschema:"maxLength=6"`
	// Bytes, as base64 text of at most 16 characters.
	Blob []byte `json:"blob,omitempty" jsonschema:"maxLength=16"`
	// How long to wait, such as 2s.
	Wait time.Duration `json:"wait,omitzero"`
	// A decimal number of another module's type, such as 12.50.
	Price *decimal.Decimal `json:"price,omitempty"`
	// Maps a team to its owner's UUID.
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

// Returns its arguments.
//
//keel:tool name=texts version=1.4 effect=read
func Texts(ctx context.Context, args TextArgs) (TextArgs, error) {
	Calls.Add(1)
	return args, nil
}

// InventoryArgs ask for up to three pods.
type InventoryArgs struct {
	// How many pods to list.
	Pods int `json:"pods,omitzero" jsonschema:"minimum=0,maximum=3"`
}

// What an idiomatic Go handler returns when it found nothing:
// nil slices and maps, required and optional alike.
type Inventory struct {
	// The pods found.
	Pods []Pod `json:"pods"`
	// The namespace's labels.
	Labels map[string]string `json:"labels"`
	// The listing's hash.
	Digest []byte `json:"digest"`
	// Remarks, if any.
	Notes []string `json:"notes,omitempty"`
	// Map teams to people.
	Owners map[string][]string `json:"owners,omitzero"`
}

// One listed pod; its labels are nil.
type Pod struct {
	// The pod's name.
	Name string `json:"name"`
	// The pod's labels.
	Labels map[string]string `json:"labels"`
	// The ports it listens on.
	Ports []int `json:"ports"`
}

// Lists pods whose collections were never filled.
//
//keel:tool name=inventory version=1.0 effect=read
func ListInventory(ctx context.Context, args InventoryArgs) (Inventory, error) {
	var inv Inventory
	for i := range args.Pods {
		inv.Pods = append(inv.Pods, Pod{Name: "pod-" + string(rune('a'+i))})
	}
	return inv, nil
}

// A filter: a comparison, or all, any or none of conditions;
// a type that contains itself, whose schema is in $defs.
type Condition struct {
	// The field a comparison reads.
	Field string `json:"field,omitempty" jsonschema:"maxLength=64"`
	// The value it must equal.
	Equals string `json:"equals,omitempty"`
	// Must all hold.
	All []Condition `json:"all,omitempty" jsonschema:"maxItems=4"`
	// Must hold, one at least.
	Any []Condition `json:"any,omitempty"`
	// Must not hold.
	Not *Condition `json:"not,omitempty"`
}

// Hold a recursive condition.
type QueryArgs struct {
	// The condition.
	Where Condition `json:"where"`
	// Makes the result a cycle, which no JSON can write.
	Loop bool `json:"loop,omitzero"`
}

// Returns its arguments, or, asked to loop, a condition that
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

// Each node's links: a map of itself.
type Graph map[string]Graph

// A list of lists: a slice of itself.
type Nesting []Nesting

// Links two nodes.
type Edge struct {
	// The node the edge leaves.
	From string `json:"from" jsonschema:"maxLength=16"`
	// The node it reaches.
	To string `json:"to" jsonschema:"maxLength=16"`
}

// LinkArgs are the edges to link.
type LinkArgs struct {
	// The links, in order.
	Edges []Edge `json:"edges" jsonschema:"maxItems=16"`
	// Makes the nesting a list that holds itself.
	Nest bool `json:"nest,omitzero"`
}

// The graph the edges make and a nesting.
type Links struct {
	// Maps each node to the nodes it links to, and theirs.
	Graph Graph `json:"graph"`
	// A list of lists.
	Nesting Nesting `json:"nesting"`
}

// Builds a graph from edges, as a handler that links what the
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
	// The datasource's uid.
	UID string `json:"uid,omitempty" jsonschema:"oneof_required=by_uid,maxLength=40"`
	// Its name.
	Name *string `json:"name,omitempty" jsonschema:"oneof_required=by_name"`
	// Its organisation, named with slug.
	Org int `json:"org,omitzero" jsonschema:"oneof_required=by_slug,minimum=1"`
	// Its slug in the organisation.
	Slug string `json:"slug,omitempty" jsonschema:"oneof_required=by_slug"`
	// A title to set.
	Title string `json:"title,omitempty" jsonschema:"anyof_required=title"`
	// Tags to add.
	Tags []string `json:"tags,omitempty" jsonschema:"anyof_required=tags,maxItems=4"`
	// A note to leave, signed by author.
	Note string `json:"note,omitempty"`
	// Signs the note; a reviewer needs an author too.
	Author string `json:"author,omitempty"`
	// Reviews the note.
	Reviewer *string `json:"reviewer,omitempty"`
	// Where to pin the note: a longitude and a latitude.
	At [2]float64 `json:"at,omitzero" jsonschema:"minimum=-180,maximum=180"`
	// Three distinct short codes.
	Codes *[3]string `json:"codes,omitempty" jsonschema:"uniqueItems=true,maxLength=4"`
	// How far back to look, from a minute to a week.
	Window time.Duration `json:"window,omitzero" jsonschema_extras:"formatMinimum=1m,formatMaximum=168h"`
	// A non-negative value below a million.
	Threshold *decimal.Decimal `json:"threshold,omitempty" jsonschema_extras:"formatMinimum=0,formatExclusiveMaximum=1e6"`
	// Up to three readings, each [seconds, label].
	Readings []Reading `json:"readings,omitempty" jsonschema:"maxItems=3"`
}

// A time and its label, written [seconds, label].
//
//keel:tuple
type Reading struct {
	// Seconds since the start.
	At float64 `jsonschema:"minimum=0"`
	// Names the reading.
	Label string `jsonschema:"maxLength=8"`
}

// JSONSchemaExtend says what a member needs beside it: a note its author,
// a reviewer the note and its author.
func (PickArgs) JSONSchemaExtend(s *jsonschema.Schema) {
	s.DependentRequired = map[string][]string{"note": {"author"}, "reviewer": {"note", "author"}}
}

// Says which way the datasource was named.
type Picked struct {
	// Names the way the datasource was named: by_uid, by_name or by_slug.
	By string `json:"by"`
	// The readings given, as given.
	Readings []Reading `json:"readings"`
}

// Says which way its arguments name the datasource. (Alternatives are
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

// Members whose null is not absent: null clears, absent keeps.
type ClearArgs struct {
	// A label, or null to clear it.
	Label wire.Nullable[string] `json:"label,omitzero" jsonschema:"minLength=1,maxLength=8"`
	// A limit, or null to clear it.
	Limit wire.Nullable[int8] `json:"limit,omitzero" jsonschema:"minimum=1"`
	// A version, or null to clear it.
	Version wire.Nullable[Version] `json:"version,omitzero"`
	// A flag or null, always sent.
	Flag wire.Nullable[bool] `json:"flag"`
}

// Returns its arguments: absent, null and a value each as it came.
//
//keel:tool name=clear version=1.0 effect=read
func Clear(ctx context.Context, args ClearArgs) (ClearArgs, error) {
	Calls.Add(1)
	return args, nil
}

// A value of several JSON types.
//
//keel:union
type Scalar struct {
	Text   *string
	Number *float64
	Flag   *bool
}

// A count of rows or the word all.
//
//keel:union
type Rows struct {
	// A count.
	Count *int `jsonschema:"minimum=1,maximum=100"`
	// The word all.
	All *string `jsonschema:"enum=all"`
}

// Members of several types. (In the order of their names: the oracle
// writes a map's keys sorted, keel a struct's members in field order.)
type UnionArgs struct {
	// How many rows, or all.
	Rows Rows `json:"rows,omitzero"`
	// Text, a number or a flag.
	Value Scalar `json:"value"`
}

// Returns its arguments.
//
//keel:tool name=union version=1.0 effect=read
func Union(ctx context.Context, args UnionArgs) (UnionArgs, error) {
	Calls.Add(1)
	return args, nil
}
