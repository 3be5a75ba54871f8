// Package taskstore is where an MCP server's tasks (SEP-2663) live between
// the calls that create, read, answer and cancel them: the Store contract
// mcpserver.Tasks keeps them in, the Record it keeps, and Memory, one
// process's store. A store shared by replicas (redistasks' on Redis)
// implements Store and needs nothing else of mcpserver.
package taskstore

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// Status is where a task is in its life (SEP-2663).
type Status string

// The statuses of a task. Completed, failed and cancelled are terminal: a
// task in one never changes again.
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether s is an end.
func (s Status) Terminal() bool {
	return s == Completed || s == Failed || s == Cancelled
}

// Record is a task as a Store keeps it: what any replica needs to
// answer tasks/get, tasks/update and tasks/cancel, and to find a task whose
// replica stopped. A store keeps it as it is given (JSON, for one shared by
// replicas) and forgets it at Expires.
type Record struct {
	ID    string `json:"id"`
	Owner string `json:"owner"` // who created it (a digest of tenant and principal)
	// Status and Message are what a client reads; Result (completed) is
	// the tools/call result, Error (failed) the JSON-RPC error, Input
	// (input_required) the input requests.
	Status  Status          `json:"status"`
	Message string          `json:"message,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	Created time.Time       `json:"created"`
	Updated time.Time       `json:"updated"`
	Expires time.Time       `json:"expires"`
	// Lease is when the replica running the task is next due to renew it;
	// a working task past its lease ran on a replica that stopped.
	Lease time.Time `json:"lease,omitzero"`
	// While the task waits for an answer (or, with a TaskRunner, all its
	// life): the call to run again with it, its arguments sealed by the
	// server (AES-GCM under a key drawn from the approvals' state secret,
	// bound to the task's id), and the signed request state the answer
	// goes with. Never shown.
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	State     string          `json:"state,omitempty"`
	// Answers are the answers a task waiting for several took before the
	// last came, sealed as its arguments are.
	Answers json.RawMessage `json:"answers,omitempty"`
	// With a TaskRunner: the run of the call now, whether the client takes
	// elicitation (so its person may be asked), and whether a person
	// already answered.
	Run      string `json:"run,omitempty"`
	Elicits  bool   `json:"elicits,omitempty"`
	Answered bool   `json:"answered,omitempty"`
	// Unknown marks a failed task whose end no replica recorded (the one
	// running it stopped, or could not store its end before its lease was
	// over): the call may have run. An end stored later replaces it.
	Unknown bool `json:"unknown,omitempty"`
}

// ErrNoTask is a Store's answer for a task it does not hold (never
// created, or past its expiry).
var ErrNoTask = errors.New("taskstore: no such task")

// ErrTooManyTasks is a Store's answer to a new task whose owner holds
// as many unexpired tasks as the store allows one owner
// (DefaultMaxPerOwner, unless the store says otherwise): that caller
// is refused (-32029), and every other caller is still served.
var ErrTooManyTasks = errors.New("taskstore: the task's owner holds as many tasks as a store allows one owner")

// DefaultMaxPerOwner is how many unexpired tasks one owner (a tenant's
// principal) may hold in a store: enough for a busy client within a
// task's TTL, and a sixteenth of what a memory store holds, so that no
// caller fills a store for the others.
const DefaultMaxPerOwner = 4096

// Store keeps tasks where every replica that serves them reads them.
// NewMemory is one process's; redistasks' is shared through Redis.
type Store interface {
	// CreateTask stores a new task, durably: once it returns, Task finds
	// it on every replica. An owner already holding as many unexpired
	// tasks as the store allows one owner gets ErrTooManyTasks.
	CreateTask(ctx context.Context, t Record) error
	// Task returns the task id, or ErrNoTask.
	Task(ctx context.Context, id string) (Record, error)
	// UpdateTask applies change to the task id atomically (no other update
	// of it in between; change may run more than once) and returns the
	// task as it then is. change returns false to leave the task as it was.
	// A change that moves Expires earlier ends the task then: from that
	// time Task does not find it and it counts toward its owner's bound no
	// more (a task withdrawn before its client saw it).
	UpdateTask(ctx context.Context, id string, change func(*Record) bool) (Record, error)
}

// A MemoryStore is a Store that names its memory: Memory returns the same
// name until the store loses what it held (a Redis restarted empty), and
// a new one from then on. A task's id carries the name it was made under,
// so a task the store no longer finds is told apart: lost with the
// store's memory (it reads failed, its outcome unknown), or never made.
// redistasks.Store is one.
type MemoryStore interface {
	Store
	Memory(ctx context.Context) (string, error)
}

// Memory is a Store in one process's memory: tasks live as
// long as the process, so it serves one replica only. It holds at most
// maxMemoryTasks unexpired tasks, and DefaultMaxPerOwner of one owner;
// past either, a new task is refused (the call is -32603, or -32029 for
// the owner's bound; nothing runs) rather than memory grown without bound.
type Memory struct {
	mu        sync.Mutex
	tasks     map[string]Record
	owners    map[string]map[string]struct{} // owner -> its tasks' ids
	now       func() time.Time
	nextSweep time.Time // when a create next forgets the expired tasks
	max       int
	maxOwner  int
}

// NewMemory returns an empty store.
func NewMemory() *Memory {
	return &Memory{tasks: map[string]Record{}, owners: map[string]map[string]struct{}{},
		now: time.Now, max: maxMemoryTasks, maxOwner: DefaultMaxPerOwner}
}

// maxMemoryTasks bounds a Memory store: a task's record is small, and a
// replica with more tasks in its TTL than this wants a shared store.
const maxMemoryTasks = 1 << 16

var errTasksFull = errors.New("taskstore: the memory task store is full of unexpired tasks")

// CreateTask stores t; a task of the same id is an error.
func (s *Memory) CreateTask(_ context.Context, t Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if now.After(s.nextSweep) {
		s.sweep(now)
		s.nextSweep = now.Add(time.Minute)
	}
	if _, ok := s.tasks[t.ID]; ok {
		return errors.New("taskstore: a task with this id exists")
	}
	mine := s.owners[t.Owner]
	if len(mine) >= s.maxOwner {
		for id := range mine { // the owner's own, not the whole store
			if !now.Before(s.tasks[id].Expires) {
				s.forget(id)
			}
		}
		if len(s.owners[t.Owner]) >= s.maxOwner {
			return ErrTooManyTasks
		}
	}
	if len(s.tasks) >= s.max {
		s.sweep(now) // the sweep's minute may not have come
		if len(s.tasks) >= s.max {
			return errTasksFull
		}
	}
	s.tasks[t.ID] = cloneRecord(t)
	if s.owners[t.Owner] == nil {
		s.owners[t.Owner] = map[string]struct{}{}
	}
	s.owners[t.Owner][t.ID] = struct{}{}
	return nil
}

// sweep forgets every expired task.
func (s *Memory) sweep(now time.Time) {
	for id, old := range s.tasks {
		if !now.Before(old.Expires) {
			s.forget(id)
		}
	}
}

// forget deletes the task id, and it from its owner's.
func (s *Memory) forget(id string) {
	owner := s.tasks[id].Owner
	delete(s.tasks, id)
	if mine := s.owners[owner]; mine != nil {
		delete(mine, id)
		if len(mine) == 0 {
			delete(s.owners, owner)
		}
	}
}

// Task returns the task id.
func (s *Memory) Task(_ context.Context, id string) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.live(id)
	if !ok {
		return Record{}, ErrNoTask
	}
	return cloneRecord(t), nil
}

// UpdateTask applies change to the task id under the store's lock.
func (s *Memory) UpdateTask(_ context.Context, id string, change func(*Record) bool) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.live(id)
	if !ok {
		return Record{}, ErrNoTask
	}
	changed := cloneRecord(t)
	if !change(&changed) {
		return cloneRecord(t), nil
	}
	changed.ID = id
	s.tasks[id] = cloneRecord(changed)
	return changed, nil
}

func (s *Memory) live(id string) (Record, bool) {
	t, ok := s.tasks[id]
	if ok && !s.now().Before(t.Expires) {
		s.forget(id)
		return Record{}, false
	}
	return t, ok
}

// cloneRecord copies the bytes a caller could change afterwards.
func cloneRecord(t Record) Record {
	t.Result = clone(t.Result)
	t.Error = clone(t.Error)
	t.Input = clone(t.Input)
	t.Arguments = clone(t.Arguments)
	t.Answers = clone(t.Answers)
	return t
}

func clone(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}
