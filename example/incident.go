// Package example holds keel's incident tools: annotated handlers from which
// keelgen writes the tool set in ../generated.
package example

//go:generate go tool keelgen -targets openai-strict -out ../generated

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/invopop/jsonschema"

	"github.com/keelgen/keel/runtime"
)

// IncidentID identifies an incident, such as INC-001.
type IncidentID string

// JSONSchema gives IncidentID its pattern and description wherever it is
// used (a field's own doc comment takes precedence).
func (IncidentID) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: `^INC-[0-9]{3,}$`, Description: "An incident's id, such as INC-001."}
}

// LookupIncidentArgs are the arguments of lookup_incident.
type LookupIncidentArgs struct {
	// The id of the incident to look up, such as INC-001.
	IncidentID IncidentID `json:"incident_id"`
}

// One incident record.
type Incident struct {
	IncidentID IncidentID `json:"incident_id"`
	// The affected service.
	Service string `json:"service"`
	// One of low, medium, high, critical.
	Severity string `json:"severity" jsonschema:"enum=low,enum=medium,enum=high,enum=critical"`
	// What users see.
	Symptom string `json:"symptom"`
	// Lists what points at the cause.
	Evidence []string `json:"evidence"`
}

// Returns one incident record by its id.
//
//keel:tool name=lookup_incident version=1.1 effect=read errors=incident_not_found timeout=2s
func LookupIncident(ctx context.Context, args LookupIncidentArgs) (Incident, error) {
	inc, ok := store.get(args.IncidentID)
	if !ok {
		return Incident{}, runtime.Fail("incident_not_found", "No incident has this id. Check the id or ask the user for it.")
	}
	return inc, nil
}

// A follow-up ticket for an incident.
type Ticket struct {
	// The new ticket's id.
	TicketID   string     `json:"ticket_id"`
	IncidentID IncidentID `json:"incident_id"`
	// Status of a new ticket is always open.
	Status string `json:"status" jsonschema:"enum=open"`
}

// Opens a follow-up ticket for an incident. It writes to the
// ticket system, so it runs only with approval.
//
//keel:tool name=create_ticket version=1.2.1 effect=write errors=incident_not_found timeout=5s
//keel:param incidentID the incident to follow up, such as INC-001
//keel:param summary what the follow-up should do, in one sentence
func CreateTicket(ctx context.Context, incidentID IncidentID, summary string) (Ticket, error) {
	if _, ok := store.get(incidentID); !ok {
		return Ticket{}, runtime.Fail("incident_not_found", "No incident has this id; a ticket needs an existing incident.")
	}
	n := ticketSeq.Add(1)
	return Ticket{TicketID: fmt.Sprintf("TCK-%04d", n), IncidentID: incidentID, Status: "open"}, nil
}

var ticketSeq atomic.Int64

// incidentStore is the example's in-memory incident database.
type incidentStore struct {
	mu   sync.RWMutex
	byID map[IncidentID]Incident
}

func (s *incidentStore) get(id IncidentID) (Incident, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	inc, ok := s.byID[id]
	return inc, ok
}

// IncidentTenant is the tenant that owns an incident, "" for an unknown
// one. The Cedar policies use it to keep tenants apart.
func IncidentTenant(id IncidentID) string {
	return incidentTenants[id]
}

var incidentTenants = map[IncidentID]string{"INC-001": "acme"}

var store = &incidentStore{byID: map[IncidentID]Incident{
	"INC-001": {
		IncidentID: "INC-001",
		Service:    "auth-api",
		Severity:   "high",
		Symptom:    "登录接口持续返回 502",
		Evidence:   []string{"auth-api timeout", "database pool exhausted"},
	},
}}
