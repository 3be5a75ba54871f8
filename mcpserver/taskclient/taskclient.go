// Package taskclient follows a task of a keel server (the MCP tasks
// extension, SEP-2663, with the 2026-07-28 revision) from Go, over
// Streamable HTTP: it starts one with a tools/call that declares the
// extension, reads it with tasks/get, answers its input requests with
// tasks/update and ends it with tasks/cancel. Each request is one POST
// with the headers and _meta the revision asks for, so any replica of a
// deployment that shares a task store answers it.
//
// The Go SDK's client (v1.8.0) has no task API: its CallTool drops a
// task's id. This package is what keel's own tests drive tasks with.
package taskclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Revision is the protocol revision the client speaks.
const Revision = "2026-07-28"

// Extension is the tasks extension's identifier.
const Extension = "io.modelcontextprotocol/tasks"

// Client sends a keel server's task requests.
type Client struct {
	// Endpoint is the server's Streamable HTTP address.
	Endpoint string
	// HTTP sends the requests (default http.DefaultClient).
	HTTP *http.Client
	// Header is added to every request (Authorization, say).
	Header http.Header
	// Capabilities are the client capabilities declared besides the
	// extension ({"elicitation": {}} to be asked a person's answer).
	Capabilities map[string]any

	ids atomic.Int64
}

// Task is a task as tasks/get reads it.
type Task struct {
	ID             string    `json:"taskId"`
	Status         string    `json:"status"` // working, input_required, completed, failed, cancelled
	StatusMessage  string    `json:"statusMessage,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
	LastUpdatedAt  time.Time `json:"lastUpdatedAt"`
	TTLMs          int64     `json:"ttlMs"`
	PollIntervalMs int64     `json:"pollIntervalMs"`
	// InputRequests are what the task waits for (input_required), by key.
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// Result is the tools/call result of a completed task; Error the
	// JSON-RPC error of a failed one.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Ended reports whether the task reached a terminal status.
func (t *Task) Ended() bool {
	return t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled"
}

// Error is a JSON-RPC error the server answered.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("taskclient: %d %s", e.Code, e.Message) }

// Start calls tool with args, declaring the extension. A task tool's call
// is a task, returned; another's is answered at once, its result returned
// instead.
func (c *Client) Start(ctx context.Context, tool string, args any) (*Task, json.RawMessage, error) {
	var res struct {
		ResultType string `json:"resultType"`
		Task
	}
	raw, err := c.call(ctx, "tools/call", tool, map[string]any{"name": tool, "arguments": args}, &res)
	if err != nil {
		return nil, nil, err
	}
	if res.ResultType != "task" {
		return nil, raw, nil
	}
	return &res.Task, nil, nil
}

// Get reads task id.
func (c *Client) Get(ctx context.Context, id string) (*Task, error) {
	var t Task
	if _, err := c.call(ctx, "tasks/get", id, map[string]any{"taskId": id}, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Update answers some or all of task id's input requests, by key (each an
// elicitation's, a sampling's or a roots' result).
func (c *Client) Update(ctx context.Context, id string, responses map[string]any) error {
	_, err := c.call(ctx, "tasks/update", id, map[string]any{"taskId": id, "inputResponses": responses}, nil)
	return err
}

// Cancel asks task id to end.
func (c *Client) Cancel(ctx context.Context, id string) error {
	_, err := c.call(ctx, "tasks/cancel", id, map[string]any{"taskId": id}, nil)
	return err
}

// Wait polls task id at the interval it asks for until it ends, and
// answers each input request with answer (nil answers none: the task then
// waits until ctx ends).
func (c *Client) Wait(ctx context.Context, id string, answer func(context.Context, *Task) (map[string]any, error)) (*Task, error) {
	for {
		t, err := c.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if t.Ended() {
			return t, nil
		}
		if t.Status == "input_required" && answer != nil && len(t.InputRequests) > 0 {
			responses, err := answer(ctx, t)
			if err != nil {
				return t, err
			}
			if err := c.Update(ctx, id, responses); err != nil {
				return t, err
			}
			continue
		}
		wait := time.Duration(t.PollIntervalMs) * time.Millisecond
		if wait <= 0 {
			wait = time.Second
		}
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// call sends one request and decodes its result into out.
func (c *Client) call(ctx context.Context, method, name string, params map[string]any, out any) (json.RawMessage, error) {
	caps := map[string]any{}
	for k, v := range c.Capabilities {
		caps[k] = v
	}
	caps["extensions"] = map[string]any{Extension: map[string]any{}}
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": Revision, "io.modelcontextprotocol/clientCapabilities": caps}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.ids.Add(1), "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", Revision)
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	msg, err := message(res)
	if err != nil {
		return nil, err
	}
	var reply struct {
		Result json.RawMessage `json:"result"`
		Error  *Error          `json:"error"`
	}
	if err := json.Unmarshal(msg, &reply); err != nil {
		return nil, fmt.Errorf("taskclient: %s answered %d, no JSON-RPC response: %w", method, res.StatusCode, err)
	}
	if reply.Error != nil {
		return nil, reply.Error
	}
	if out != nil {
		if err := json.Unmarshal(reply.Result, out); err != nil {
			return nil, fmt.Errorf("taskclient: %s: %w", method, err)
		}
	}
	return reply.Result, nil
}

// message is the JSON-RPC response of an answer: its body, or the last
// event of an event stream.
func message(res *http.Response) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return body, nil
	}
	var last []byte
	s := bufio.NewScanner(bytes.NewReader(body))
	s.Buffer(nil, len(body)+1)
	for s.Scan() {
		if data, ok := bytes.CutPrefix(s.Bytes(), []byte("data: ")); ok {
			last = append(last[:0], data...)
		}
	}
	if last == nil {
		return nil, errors.New("taskclient: an event stream with no message")
	}
	return last, nil
}
