package doortest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/keelgen/keel/provider/anthropic"
	"github.com/keelgen/keel/provider/bedrock"
	"github.com/keelgen/keel/provider/gemini"
	"github.com/keelgen/keel/provider/ollama"
	"github.com/keelgen/keel/provider/openai"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/keeltest/doortest"
)

// A provider door: the names its tool definitions list for the caller, and
// one call in the provider's wire shape turned into a ToolCall (false when
// the shape cannot carry c) and the answer written back, as JSON.
type providerDoor struct {
	list   func(tools []runtime.ModelTool) ([]string, error)
	call   func(c doortest.Case, id string) (runtime.ToolCall, bool)
	answer func(r runtime.ToolResult) any
}

func providerDoors() map[string]providerDoor {
	return map[string]providerDoor{
		"anthropic": {
			list: func(tools []runtime.ModelTool) ([]string, error) {
				defs, err := anthropic.Tools(tools, anthropic.Options{})
				var names []string
				for _, d := range defs {
					names = append(names, d.Name)
				}
				return names, err
			},
			call: func(c doortest.Case, id string) (runtime.ToolCall, bool) {
				var u anthropic.ToolUse
				if !c.JSONArguments() || json.Unmarshal(wire(`{"type":"tool_use","id":%q,"name":%s,"input":%s}`, id, c), &u) != nil {
					return runtime.ToolCall{}, false
				}
				return anthropic.Call(u), true
			},
			answer: func(r runtime.ToolResult) any { return anthropic.Result(r) },
		},
		"gemini": {
			list: func(tools []runtime.ModelTool) ([]string, error) {
				defs, err := gemini.Declarations(tools, gemini.Options{})
				var names []string
				for _, d := range defs {
					names = append(names, d.Name)
				}
				return names, err
			},
			call: func(c doortest.Case, id string) (runtime.ToolCall, bool) {
				var fc gemini.FunctionCall
				if !c.JSONArguments() || json.Unmarshal(wire(`{"id":%q,"name":%s,"args":%s}`, id, c), &fc) != nil {
					return runtime.ToolCall{}, false
				}
				return gemini.Call(fc, "fallback"), true
			},
			answer: func(r runtime.ToolResult) any { return gemini.Result(r) },
		},
		"ollama": {
			list: func(tools []runtime.ModelTool) ([]string, error) {
				defs, err := ollama.Tools(tools, ollama.Options{})
				var names []string
				for _, d := range defs {
					names = append(names, d.Function.Name)
				}
				return names, err
			},
			call: func(c doortest.Case, id string) (runtime.ToolCall, bool) {
				var tc ollama.ToolCall
				if !c.JSONArguments() || json.Unmarshal(wire(`{"id":%q,"function":{"name":%s,"arguments":%s}}`, id, c), &tc) != nil {
					return runtime.ToolCall{}, false
				}
				return ollama.Call(tc, "fallback"), true
			},
			answer: func(r runtime.ToolResult) any { return ollama.Result(r) },
		},
		"openai": {
			list: func(tools []runtime.ModelTool) ([]string, error) {
				var names []string
				for _, t := range openai.New(tools, openai.Options{}).ChatTools() {
					names = append(names, t.Function.Name)
				}
				return names, nil
			},
			call: func(c doortest.Case, id string) (runtime.ToolCall, bool) {
				// The arguments travel as a string: any bytes.
				return openai.New(nil, openai.Options{}).Call(id, c.Tool, c.Arguments), true
			},
			answer: func(r runtime.ToolResult) any { return openai.ChatResult(r) },
		},
		"bedrock": {
			list: func(tools []runtime.ModelTool) ([]string, error) {
				cfg, err := bedrock.Tools(tools, bedrock.Options{})
				var names []string
				if cfg != nil {
					for _, t := range cfg.Tools {
						if spec, ok := t.(*types.ToolMemberToolSpec); ok {
							names = append(names, aws.ToString(spec.Value.Name))
						}
					}
				}
				return names, err
			},
			call: func(c doortest.Case, id string) (runtime.ToolCall, bool) {
				var input any // a document: what the SDK decoded
				if !c.Decodable() || json.Unmarshal([]byte(c.Arguments), &input) != nil {
					return runtime.ToolCall{}, false
				}
				return bedrock.Call(types.ToolUseBlock{ToolUseId: aws.String(id), Name: aws.String(c.Tool), Input: document.NewLazyDocument(input)}), true
			},
			answer: func(r runtime.ToolResult) any {
				b, err := bedrock.Result(r, bedrock.Options{})
				if err != nil {
					return err.Error()
				}
				return b
			},
		},
	}
}

func wire(format, id string, c doortest.Case) []byte {
	name, _ := json.Marshal(c.Tool)
	return []byte(fmt.Sprintf(format, id, name, c.Arguments))
}

// The corpus through the executor itself and through each provider's Call
// and Result: definitions list only what the caller may call, and every
// call the provider's shape can carry is keel's answer, audited, and its
// answer in the provider's shape says nothing internal.
func TestDoorProviders(t *testing.T) {
	ctx := context.Background()
	doors := providerDoors()
	doors["executor"] = providerDoor{
		list: func(tools []runtime.ModelTool) ([]string, error) {
			var names []string
			for _, m := range tools {
				names = append(names, m.Name)
			}
			return names, nil
		},
		call: func(c doortest.Case, id string) (runtime.ToolCall, bool) {
			return runtime.ToolCall{ID: id, Name: c.Tool, Arguments: c.Args()}, true
		},
		answer: func(r runtime.ToolResult) any { return r },
	}
	for name, door := range doors {
		t.Run(name, func(t *testing.T) {
			f, err := doortest.New()
			if err != nil {
				t.Fatal(err)
			}
			listed, err := door.list(f.Exec.ModelToolsFor(ctx, doortest.Caller()))
			if err != nil {
				t.Fatal(err)
			}
			if err := doortest.CheckListed(listed); err != nil {
				t.Error(err)
			}
			sent := 0
			for i, c := range doortest.Calls() {
				id := fmt.Sprint(name, "-", i)
				call, ok := door.call(c, id)
				if !ok {
					continue
				}
				r := f.Exec.Execute(ctx, doortest.Caller(), call)
				answer, err := json.Marshal(door.answer(r))
				if err != nil {
					t.Fatalf("%s: the answer does not encode: %v", c.Name, err)
				}
				if c.Code == runtime.CodeInvalidArguments && name == "bedrock" && r.OK {
					// The SDK held a decoded document: what it changed (a
					// duplicate merged, a number rounded) keel checks as it
					// arrives.
					c.Code = ""
				}
				msg := ""
				if r.Error != nil {
					msg = r.Error.Message
				}
				if err := doortest.CheckAnswer(c, r.Code(), msg); err != nil {
					t.Error(err)
				}
				if err := doortest.CheckAnswer(doortest.Case{Name: c.Name, Code: r.Code()}, r.Code(), string(answer)); err != nil && r.Code() != runtime.CodeUnknownTool {
					t.Errorf("%s: in the provider's shape: %v", c.Name, err)
				}
				if !f.Audited(call.ID) {
					t.Errorf("%s: not audited", c.Name)
				}
				sent++
			}
			t.Logf("%s: %d calls", name, sent)
		})
	}
}

// A door joins the corpus before it lands: every provider package is in
// providerDoors, and every adapter module and the MCP server have a doors
// test that runs the corpus (doortest.Calls).
func TestEveryDoorRunsTheCorpus(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	providers, err := filepath.Glob(filepath.Join(root, "provider", "*", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	doors := providerDoors()
	seen := map[string]bool{}
	for _, p := range providers {
		name := filepath.Base(filepath.Dir(p))
		if !seen[name] {
			seen[name] = true
			if _, ok := doors[name]; !ok {
				t.Errorf("provider/%s is a door the corpus does not run through: add it to providerDoors", name)
			}
		}
	}
	modules, err := filepath.Glob(filepath.Join(root, "adapters", "*", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join(root, "mcpserver")}
	for _, m := range modules {
		dirs = append(dirs, filepath.Dir(m))
	}
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "doors_test.go"))
		if err != nil || !strings.Contains(string(b), "doortest.Calls()") {
			t.Errorf("%s has no doors_test.go that runs doortest.Calls()", dir)
		}
	}
	if len(seen) < 5 || len(modules) < 5 {
		t.Fatalf("found %d providers and %d adapter modules: is the tree where this test looks?", len(seen), len(modules))
	}
}
