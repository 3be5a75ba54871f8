// Package runtime is what keelgen's generated code and agent harnesses import:
// the tool call and result types, the error codes, the effect and policy
// types, and the Executor that runs every call through one fixed order:
//
//	registered? → input schema → policy → handler → error classification →
//	output schema → result
//
// The order lives in Executor.Execute and nowhere else. Generated code
// describes tools (ToolSpec, NewTools), reads and checks their arguments and
// results with runtime/wire, and selects them with a static switch; a tool
// set written by hand uses NewTool and Handle.
package runtime

// Version is the version of this runtime package.
const Version = "0.4.0"

// IsAtLeastVersion0_2_0 is referenced by keelgen's generated code. If the
// runtime a program links is older than the generator that wrote the code,
// the constant is missing and the build fails, instead of misbehaving later.
// (0.2.0: ToolSet.Lock and start-up verification of keel.lock.json.)
const IsAtLeastVersion0_2_0 = true

// IsAtLeastVersion0_3_0 is referenced by code generated since runtime
// ModelTools and EmbeddedLock took over bodies keelgen used to write.
const IsAtLeastVersion0_3_0 = true

// IsAtLeastVersion0_4_0 is referenced by code generated since the checks of
// a call became generated code (runtime/wire, ToolSpec, NewTools).
const IsAtLeastVersion0_4_0 = true
