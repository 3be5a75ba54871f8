// Package mcpsuite is the tool set the official MCP conformance suite
// (@modelcontextprotocol/conformance) calls: one keel tool per tools
// scenario, named and shaped as the suite asks, so CI runs the suite
// against a keel server (cmd/mcpsuite-server) and every tools scenario is
// checked by software keel did not write.
package mcpsuite

//go:generate go tool keelgen -out generated

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"time"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/report"
)

// Nothing: the arguments of a call that takes none, or the data of
// a result whose content blocks are all it says.
type None struct{}

// A result of one text.
type Text struct {
	// The tool's answer.
	Text string `json:"text"`
}

// Answers with one text.
//
//keel:tool name=test_simple_text version=1.0 effect=read
func SimpleText(ctx context.Context, _ None) (Text, error) {
	return Text{Text: "This is a simple text response for testing."}, nil
}

// Answers with a one-pixel red PNG.
//
//keel:tool name=test_image_content version=1.0 effect=read content=image/png
func ImageContent(ctx context.Context, _ None) (runtime.WithContent[None], error) {
	return runtime.WithContent[None]{Content: []runtime.Content{runtime.Image("image/png", redPixel())}}, nil
}

// Answers with a short WAV tone.
//
//keel:tool name=test_audio_content version=1.0 effect=read content=audio/wav
func AudioContent(ctx context.Context, _ None) (runtime.WithContent[None], error) {
	return runtime.WithContent[None]{Content: []runtime.Content{runtime.Audio("audio/wav", silence())}}, nil
}

// Answers with a text resource.
//
//keel:tool name=test_embedded_resource version=1.0 effect=read content=text/plain
func EmbeddedResource(ctx context.Context, _ None) (runtime.WithContent[None], error) {
	return runtime.WithContent[None]{Content: []runtime.Content{
		runtime.TextResource("test://embedded-resource", "text/plain", "This is an embedded resource content."),
	}}, nil
}

// Answers with text, an image and a JSON resource.
//
//keel:tool name=test_multiple_content_types version=1.0 effect=read content=application/json,image/png
func MultipleContentTypes(ctx context.Context, _ None) (runtime.WithContent[Text], error) {
	return runtime.WithContent[Text]{
		Data: Text{Text: "Multiple content types test:"},
		Content: []runtime.Content{
			runtime.Image("image/png", redPixel()),
			runtime.TextResource("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`),
		},
	}, nil
}

// Logs three messages while it runs.
//
//keel:tool name=test_tool_with_logging version=1.0 effect=read
func WithLogging(ctx context.Context, _ None) (Text, error) {
	report.Log(ctx, report.LogInfo, "Tool execution started")
	time.Sleep(50 * time.Millisecond)
	report.Log(ctx, report.LogInfo, "Tool processing data")
	time.Sleep(50 * time.Millisecond)
	report.Log(ctx, report.LogInfo, "Tool execution completed")
	return Text{Text: "Logging test completed."}, nil
}

// Logs one message, which a client of the 2026-07-28 revision
// hears only when its request set a log level (_meta's logLevel).
//
//keel:tool name=test_logging_tool version=1.0 effect=read
func LoggingTool(ctx context.Context, _ None) (Text, error) {
	report.Log(ctx, report.LogInfo, "Logging tool ran")
	return Text{Text: "Logged."}, nil
}

// Reports 0, 50 and 100 of 100, 50 ms apart.
//
//keel:tool name=test_tool_with_progress version=1.0 effect=read
func WithProgress(ctx context.Context, _ None) (Text, error) {
	for i, done := range []float64{0, 50, 100} {
		if i > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		report.Progress(ctx, done, 100, "")
	}
	return Text{Text: "Progress test completed."}, nil
}

// Always fails, as the suite asks.
//
//keel:tool name=test_error_handling version=1.0 effect=read errors=intentional_failure
func ErrorHandling(ctx context.Context, _ None) (Text, error) {
	return Text{}, runtime.Fail("intentional_failure", "This tool intentionally returns an error for testing")
}

// GreetArgs name whom to greet.
type GreetArgs struct {
	// Whom to greet.
	Name string `json:"name"`
	// Routes the greeting: a deployment's load balancer reads it
	// from the Mcp-Param-Region header (SEP-2243).
	Region string `json:"region,omitempty" jsonschema_extras:"x-mcp-header=Region"`
}

// A greeting.
type Greeting struct {
	// The greeting's words.
	Text string `json:"text"`
}

// MCPText is the greeting's words, which MCP's text block carries as
// they are (the tasks scenarios read them there).
func (g Greeting) MCPText() string { return g.Text }

// Greets, at once: the tasks scenarios' tool that is never a task.
//
//keel:tool name=greet version=1.2 effect=read
func Greet(ctx context.Context, in GreetArgs) (Greeting, error) {
	return Greeting{Text: "Hello, " + in.Name + "!"}, nil
}

// SlowArgs say how long to work.
type SlowArgs struct {
	// How long the computation takes.
	Seconds int `json:"seconds" jsonschema:"minimum=0,maximum=600"`
	// Names the computation in its answer.
	Label string `json:"label,omitempty" jsonschema:"maxLength=200"`
}

// Works for the seconds asked, or until it is cancelled: the
// tasks scenarios' long call.
//
//keel:tool name=slow_compute version=1.0 effect=read
func SlowCompute(ctx context.Context, in SlowArgs) (Text, error) {
	select {
	case <-time.After(time.Duration(in.Seconds) * time.Second):
	case <-ctx.Done():
		return Text{}, ctx.Err()
	}
	return Text{Text: "Computed " + in.Label + "."}, nil
}

// Fails after a second, as a tool fails (isError): the tasks
// scenarios' job whose task completes with an error.
//
//keel:tool name=failing_job version=1.0 effect=read errors=job_failed
func FailingJob(ctx context.Context, _ None) (Text, error) {
	select {
	case <-time.After(time.Second):
	case <-ctx.Done():
		return Text{}, ctx.Err()
	}
	return Text{}, runtime.Fail("job_failed", "The job failed, as it always does.")
}

// DeleteArgs name the file to delete.
type DeleteArgs struct {
	// The file to delete.
	Filename string `json:"filename" jsonschema:"maxLength=200"`
}

// Deletes nothing, once a person approved the call: a write
// needs approval, which keel asks the client's person for as an input
// request (cmd/mcpsuite-server sets mcpserver.Approvals). The tasks
// scenarios' tool that waits for the client's input.
//
//keel:tool name=confirm_delete version=1.0 effect=write
func ConfirmDelete(ctx context.Context, in DeleteArgs) (Text, error) {
	return Text{Text: "Deleted " + in.Filename + "."}, nil
}

// Never run: cmd/mcpsuite-server's tool filter hides it
// from its task's run, which is unknown_tool, a JSON-RPC error (-32602), so
// its task fails: the tasks scenarios' protocol error.
//
//keel:tool name=protocol_error_job version=1.1 effect=read
func ProtocolErrorJob(ctx context.Context, _ None) (Text, error) {
	return Text{Text: "This job ran, which its rate limit forbids."}, nil
}

func redPixel() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// silence is 10 ms of 8 kHz 8-bit mono PCM as a WAV file.
func silence() []byte {
	const rate, samples = 8000, 80
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + samples))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1)) // PCM
	le(uint16(1)) // mono
	le(uint32(rate))
	le(uint32(rate)) // bytes a second
	le(uint16(1))    // block align
	le(uint16(8))    // bits a sample
	b.WriteString("data")
	le(uint32(samples))
	b.Write(bytes.Repeat([]byte{128}, samples))
	return b.Bytes()
}

// Person is someone, with where they live.
type Person struct {
	// The person's name.
	Name string `json:"name"`
	// Where they live.
	Address *Address `json:"address,omitempty"`
}

// A postal address, and the one before it: a type that
// contains itself, which only $defs and $ref can write.
type Address struct {
	// The street and number.
	Street string `json:"street,omitempty"`
	// The city.
	City string `json:"city,omitempty"`
	// The address before this one, if the person moved.
	Previous *Address `json:"previous,omitempty"`
}

// Counts the addresses a person has had.
type Moves struct {
	// How many addresses were given.
	Addresses int `json:"addresses"`
}

// Takes a schema with $schema, $defs and $ref: the
// conformance suite's check that 2020-12 structure reaches the client.
//
//keel:tool name=json_schema_2020_12_tool version=1.0 effect=read
func JSONSchema202012(ctx context.Context, p Person) (Moves, error) {
	n := 0
	for a := p.Address; a != nil; a = a.Previous {
		n++
	}
	return Moves{Addresses: n}, nil
}
