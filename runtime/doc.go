// Package runtime is what keelgen's generated code and agent harnesses
// import: the Executor that runs every tool call through one fixed order,
//
//	registered and visible? → scopes → rate → input schema →
//	recorded outcome → policy → handler → business or internal error →
//	output schema → result
//
// and the types a harness hands it and gets back. The order lives in one
// file, order.go (execute and one method per stage), and is described in
// docs/executor.md.
//
// # For a harness
//
// The generated package's NewExecutor makes an [Executor] of its tool set;
// [Executor.Execute] takes an [ExecutionContext] (who calls, from the
// harness's own auth, never from the model) and a [ToolCall] (the model's
// name and arguments, untrusted), and returns one [ToolResult], whose
// [ToolError] carries a stable [Code] (CodeUnknownTool,
// CodeInsufficientScope, CodeRateLimitExceeded, CodeInvalidArguments,
// CodeApprovalRequired, CodeToolInternalError, CodeToolTimeout,
// CodeToolCancelled, CodeInvalidToolOutput, or a declared business code).
// Options: [WithLogger], [WithLimits], [WithErrorDetails],
// [WithDefaultTimeout], [WithPolicy], [WithToolFilter], [WithRateLimits],
// [WithObserver] (and [AuditLog]), [WithToolGroups], [WithOutcomes] (a
// write sent again under its call id gets its first result: an
// [OutcomeStore], memstore.NewOutcomeStore or redisreplay for replicas). A handler fails with
// [Fail], reads the caller with [ExecutionContextFrom], returns content
// blocks with [WithContent], and sends logs and progress to a caller that
// listens with runtime/report. [Executor.ModelToolsFor] is what this caller's
// model is shown; [ModelTools], a whole set.
//
// # Policy and approvals
//
// [Policy], [PolicyRequest] and [Decision] decide a valid call;
// [SideEffectPolicy] is the default. [WithApprovals] takes a grant.Key
// (grant.HMACKey, grant.Ed25519Key, grant.Ed25519PublicKey) and a
// [ReplayStore] (memstore.NewReplayStore; redisreplay for several
// replicas); grant.Issue signs a person's approval of an
// [ApprovalRequest], bound to the call by grant.ArgumentsDigest.
//
// # The lock and signatures
//
// keel.lock.json is the reviewed contract of a set, which keelgen writes
// and [NewExecutor] verifies against the contracts the binary holds, by
// digest, before it accepts a call. [WithRequiredSignature] requires its
// signature (keelgen -sign, by the key of keelgen -genkey);
// [WithExpectedSetDigest] pins one exact set.
//
// # For generated code, and for tool sets made by hand
//
// Generated code describes tools as [ToolSpec] tables ([NewTools]), reads
// and checks their arguments and results with runtime/wire through each
// [Handler], and references the newest IsAtLeastVersion constant. A
// tool set written by hand uses [NewTool] and [Handle] (runtime/keeltest
// makes a [ToolSet] of them).
package runtime

// Version is the version of this runtime package. Generated code references
// the newest IsAtLeastVersion constant of the runtime it was written for: if
// the runtime a program links is older than the generator that wrote the
// code, the constant is missing and the build fails, instead of misbehaving
// later.
const (
	Version = "0.6.0"
	// 0.2.0: ToolSet.Lock and start-up verification of keel.lock.json.
	IsAtLeastVersion0_2_0 = true
	// 0.3.0: ModelTools and EmbeddedLock took over bodies keelgen wrote.
	IsAtLeastVersion0_3_0 = true
	// 0.4.0: the checks of a call are generated code (runtime/wire,
	// ToolSpec, NewTools).
	IsAtLeastVersion0_4_0 = true
	// 0.6.0: generated code's Call and EmbeddedLock are runtime/wire's.
	IsAtLeastVersion0_6_0 = true
)
