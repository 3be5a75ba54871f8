package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/keelgen/keel/mcpserver"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest"
)

// A tool set served over Streamable HTTP without sessions, and the Go
// SDK's client calling it: every call goes through the executor, and a
// call it refuses is a tool error the model reads, with its stable code.
// (ServeStdio serves the same server on standard input and output.)
func ExampleHTTPHandler() {
	echo := runtime.NewTool(runtime.ToolInfo{Name: "echo", Version: "1", Effect: runtime.EffectRead, Description: "Echoes a word.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["word"],"properties":{"word":{"type":"string","maxLength":10}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, in struct {
			Word string `json:"word"`
		}) (map[string]string, error) {
			return map[string]string{"word": in.Word}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(echo), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	h, err := mcpserver.HTTPHandler(mcpserver.New(exec, mcpserver.Options{}), mcpserver.HTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h) // in a program: http.ListenAndServe(addr, h)
	defer srv.Close()

	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	for _, word := range []string{"hello", "far too long a word"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"word": word}})
		if err != nil {
			panic(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !res.IsError {
			fmt.Println("result", text)
			continue
		}
		var failed runtime.ToolResult // a refusal's text is the result contract's JSON
		json.Unmarshal([]byte(text), &failed)
		fmt.Println("refused", failed.Code(), failed.Error.Message)
	}
	// Output:
	// result {"word":"hello"}
	// refused invalid_arguments The arguments do not match the tool's input schema.
}

// The stdio server, with the process's standard input and output replaced
// by two pipes: ServeStdio is Run on an mcp.StdioTransport, the same
// newline-delimited JSON over a pair of streams. A client that starts the
// server as a subprocess (a desktop host) speaks to it this way.
func ExampleServer_Run() {
	echo := runtime.NewTool(runtime.ToolInfo{Name: "echo", Version: "1", Effect: runtime.EffectRead, Description: "Echoes a word.",
		InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":false,"required":["word"],"properties":{"word":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(_ context.Context, in struct {
			Word string `json:"word"`
		}) (map[string]string, error) {
			return map[string]string{"word": in.Word}, nil
		}))
	exec, err := runtime.NewExecutor(keeltest.Of(echo), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go mcpserver.New(exec, mcpserver.Options{}).Run(ctx, &mcp.IOTransport{Reader: toServer, Writer: fromServer}) // in a program: mcpserver.ServeStdio(ctx, server)

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"word": "hello"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// {"word":"hello"}
}
