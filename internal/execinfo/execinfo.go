// Package execinfo lets keel's own servers ask an executor what a harness
// has no use for, without the runtime exporting it: whether what a caller
// sees varies by caller. The runtime sets the functions when it loads; the
// package is a leaf, so runtime may import it.
package execinfo

// Varies reports whether what a caller of exec (a *runtime.Executor) sees
// depends on who it is: a ToolFilter, or a tool with scopes. Set by the
// runtime.
var Varies func(exec any) bool

// Offered reports whether exec's tool groups offer tool (a *runtime.Tool of
// its set): keel's MCP server registers no other with the SDK. Set by the
// runtime.
var Offered func(exec, tool any) bool

// Replay is exec's replay store (runtime.WithApprovals), as a
// runtime.ReplayStore, or nil: keel's MCP server spends each answer to an
// approval question in it, so that no question is answered twice. Set by
// the runtime.
var Replay func(exec any) any
