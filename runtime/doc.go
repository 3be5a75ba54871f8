// Package runtime is what keelgen's generated code and agent harnesses
// import: the Executor that runs every tool call through one fixed order,
//
//	registered and visible? → scopes → rate → input schema → policy →
//	handler → business or internal error → output schema → result
//
// and the types a harness hands it and gets back. The order lives in
// Executor.Execute and nowhere else.
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
// [WithObserver] (and [AuditLog]). A
// handler fails with [Fail], reads the caller with [ExecutionContextFrom] and
// reports progress with [ReportProgress], which reaches a caller that asked
// through [WithProgress]. [ModelTool] is what the model is shown.
//
// # Policy and approvals
//
// [Policy], [PolicyRequest] and [Decision] decide a valid call;
// [SideEffectPolicy] is the default. [WithApprovals] takes a grant.Key
// (grant.HMACKey, grant.Ed25519Key, grant.Ed25519PublicKey) and a
// [ReplayStore] (memstore.NewReplayStore; redisreplay for several
// replicas); grant.Issue signs a person's approval of an
// [ApprovalRequest], bound to the call by [ArgumentsDigest].
//
// # The lock and signatures
//
// keel.lock.json is the reviewed contract of a set, which keelgen writes
// and [NewExecutor] verifies against the contracts the binary holds, by
// digest, before it accepts a call ([EmbeddedLock] reads it from generated
// code). [WithRequiredSignature] requires its signature (keelgen -sign;
// [ParsePublicKeyPEM] reads the public key); [WithExpectedSetDigest] pins
// one exact set.
//
// # For generated code, and for tool sets made by hand
//
// Generated code describes tools as [ToolSpec] tables ([NewTools]), reads
// and checks their arguments and results with runtime/wire through each
// [Handler] and [Call], and references the IsAtLeastVersion constants. A
// tool set written by hand uses [NewTool] and [Handle] (runtime/keeltest
// makes a [ToolSet] of them).
package runtime

// Version is the version of this runtime package.
const Version = "0.5.0"

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
