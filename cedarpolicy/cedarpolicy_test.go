package cedarpolicy_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cedar-policy/cedar-go"

	"github.com/keelgen/keel/cedarpolicy"
	"github.com/keelgen/keel/example"
	"github.com/keelgen/keel/generated"
	confgen "github.com/keelgen/keel/internal/testing/conformance/generated"
	"github.com/keelgen/keel/memstore"
	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
	"github.com/keelgen/keel/runtime/keeltest"
)

// incidentPolicy is the example's policy set with its extra attribute: the
// tenant that owns the incident a call names.
func incidentPolicy(t testing.TB) *cedarpolicy.Policy {
	t.Helper()
	set, err := cedarpolicy.LoadFiles("../example/policies/incident.cedar")
	if err != nil {
		t.Fatal(err)
	}
	return cedarpolicy.New(set, cedarpolicy.Options{
		ExtraKeys: []string{"incident_tenant"},
		Extra: func(_ context.Context, req runtime.PolicyRequest) map[string]string {
			var args struct {
				IncidentID example.IncidentID `json:"incident_id"`
			}
			_ = json.Unmarshal(req.Arguments, &args) // validated already
			return map[string]string{"incident_tenant": example.IncidentTenant(args.IncidentID)}
		},
	})
}

var grantKey = grant.HMACKey([]byte("test approvals: 32 bytes or more"))

func executor(t testing.TB, p runtime.Policy) *runtime.Executor {
	t.Helper()
	exec, err := generated.NewExecutor(runtime.WithPolicy(p), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithApprovals(grantKey, memstore.NewReplayStore()))
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

var (
	aliceOnCall = runtime.ExecutionContext{Tenant: "acme", Principal: "alice", Groups: []string{"oncall"}}
	carol       = runtime.ExecutionContext{Tenant: "acme", Principal: "carol"}
	bobGlobex   = runtime.ExecutionContext{Tenant: "globex", Principal: "bob", Groups: []string{"oncall"}}
)

func call(name, args string) runtime.ToolCall {
	return runtime.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(args)}
}

const ticketArgs = `{"incident_id":"INC-001","summary":"raise pool size"}`

func TestIncidentPolicyRules(t *testing.T) {
	p := incidentPolicy(t)
	exec := executor(t, p)
	ctx := context.Background()

	// anyone-reads
	for _, ec := range []runtime.ExecutionContext{aliceOnCall, carol} {
		if r := exec.Execute(ctx, ec, call(generated.ToolLookupIncident, `{"incident_id":"INC-001"}`)); !r.OK {
			t.Errorf("%s reads INC-001: %+v", ec.Principal, r.Error)
		}
	}
	// oncall-creates-tickets: carol is not on call; no approval can help.
	r := exec.Execute(ctx, carol, call(generated.ToolCreateTicket, ticketArgs))
	if r.Code() != runtime.CodeApprovalRequired || r.Error.Approval != nil {
		t.Errorf("carol creates a ticket: %+v", r.Error)
	}
	// alice is on call: the call needs a person's approval, then runs.
	r = exec.Execute(ctx, aliceOnCall, call(generated.ToolCreateTicket, ticketArgs))
	if r.Code() != runtime.CodeApprovalRequired || r.Error.Approval == nil {
		t.Fatalf("alice creates a ticket without approval: %+v", r.Error)
	}
	tok, err := grant.Issue(grantKey, r.Error.Approval.Grant("acme", "alice", time.Now().Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	approved := aliceOnCall
	approved.Grant = tok
	if r := exec.Execute(ctx, approved, call(generated.ToolCreateTicket, ticketArgs)); !r.OK {
		t.Fatalf("alice with a grant: %+v", r.Error)
	}
	// tenant-isolation: bob of globex may not read or ticket acme's incident.
	for _, c := range []runtime.ToolCall{call(generated.ToolLookupIncident, `{"incident_id":"INC-001"}`), call(generated.ToolCreateTicket, ticketArgs)} {
		if r := exec.Execute(ctx, bobGlobex, c); r.Code() != runtime.CodeApprovalRequired || r.Error.Approval != nil {
			t.Errorf("bob %s: %+v", c.Name, r.Error)
		}
	}
	// An unknown incident belongs to no tenant: the handler answers.
	if r := exec.Execute(ctx, bobGlobex, call(generated.ToolLookupIncident, `{"incident_id":"INC-404"}`)); r.Code() != "incident_not_found" {
		t.Errorf("bob reads INC-404: %+v", r.Error)
	}
}

func TestReasonsNamePolicies(t *testing.T) {
	p := incidentPolicy(t)
	info := generated.ToolSet().Lookup(generated.ToolLookupIncident).Info()
	d := p.Decide(context.Background(), runtime.PolicyRequest{Tool: info, Context: bobGlobex, Arguments: []byte(`{"incident_id":"INC-001"}`)})
	if d.Allow || d.Reason != "cedar: deny: forbidden by tenant-isolation" {
		t.Fatalf("decision %+v", d)
	}
	d = p.Decide(context.Background(), runtime.PolicyRequest{Tool: info, Context: carol, Arguments: []byte(`{"incident_id":"INC-001"}`)})
	if !d.Allow || d.Reason != "cedar: permitted by anyone-reads" {
		t.Fatalf("decision %+v", d)
	}
}

func write(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.cedar")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cedar-go skips a forbid whose condition errors and may then allow; the
// adapter denies on any evaluation error.
func TestEvaluationErrorsDeny(t *testing.T) {
	info := generated.ToolSet().Lookup(generated.ToolLookupIncident).Info()
	req := runtime.PolicyRequest{Tool: info, Context: carol, Arguments: []byte(`{"incident_id":"INC-001"}`)}
	for name, src := range map[string]string{
		"erroring forbid":   `permit (principal, action, resource); forbid (principal, action, resource) when { principal.clearance == "none" };`,
		"missing argument":  `permit (principal, action, resource) when { context.args.summary == "x" || true };`,
		"missing extra key": `permit (principal, action, resource) when { context.extra.region == "eu" || true };`,
		"type error":        `permit (principal, action, resource) when { context.tenant > 3 || true };`,
	} {
		set, err := cedarpolicy.LoadFiles(write(t, src))
		if err != nil {
			t.Fatal(err)
		}
		d := cedarpolicy.New(set, cedarpolicy.Options{}).Decide(context.Background(), req)
		if d.Allow || d.NeedsApproval || !strings.Contains(d.Reason, "evaluation errors") {
			t.Errorf("%s: %+v", name, d)
		}
	}
}

// The hazard itself: cedar-go's own decision for a set whose forbid errors.
func TestCedarGoAllowsWhenForbidErrors(t *testing.T) {
	set, err := cedar.NewPolicySetFromBytes("p.cedar", []byte(`permit (principal, action, resource); forbid (principal, action, resource) when { principal.clearance == "none" };`))
	if err != nil {
		t.Fatal(err)
	}
	uid := cedar.NewEntityUID("Keel::Principal", "carol")
	decision, diag := set.IsAuthorized(cedar.EntityMap{uid: {UID: uid}}, cedar.Request{Principal: uid,
		Action: cedar.NewEntityUID("Keel::Action", "x"), Resource: cedar.NewEntityUID("Keel::Tool", "x"), Context: cedar.NewRecord(nil)})
	if decision != cedar.Allow || len(diag.Errors) != 1 {
		t.Fatalf("cedar-go: %v %+v (if this changed, the adapter's deny-on-error is still right)", decision, diag)
	}
}

func TestLoadFilesStopsOnBadPolicies(t *testing.T) {
	if _, err := cedarpolicy.LoadFiles(write(t, `permit (principal, action, resource) when { context.x == };`)); err == nil || !strings.Contains(err.Error(), "p.cedar") || !strings.Contains(err.Error(), "1:59") {
		t.Errorf("syntax error: %v", err)
	}
	dup := `@id("a") permit (principal, action, resource); @id("a") forbid (principal, action, resource);`
	if _, err := cedarpolicy.LoadFiles(write(t, dup)); err == nil || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("duplicate ids: %v", err)
	}
	if _, err := cedarpolicy.LoadFiles(filepath.Join(t.TempDir(), "missing.cedar")); err == nil {
		t.Error("missing file loaded")
	}
}

// Arguments of every JSON kind reach the policy with a fixed shape.
func TestArgumentsAsRecord(t *testing.T) {
	set, err := cedarpolicy.LoadFiles(write(t, `permit (principal, action, resource) when {
		context.args.n == 7 && context.args.s == "x" && context.args.b && context.args.f == decimal("1.5") &&
		context.args.list.contains("a") && context.args.obj.k == "v" && !(context.args has gone) };`))
	if err != nil {
		t.Fatal(err)
	}
	d := cedarpolicy.New(set, cedarpolicy.Options{}).Decide(context.Background(), runtime.PolicyRequest{
		Tool: runtime.ToolInfo{Name: "t", Version: "1", Effect: runtime.EffectRead}, Context: carol,
		Arguments: []byte(`{"n":7,"s":"x","b":true,"f":1.5,"list":["a","b"],"obj":{"k":"v"},"gone":null}`)})
	if !d.Allow {
		t.Fatalf("decision %+v", d)
	}
}

// A number reaches Cedar in one form whatever its spelling: a policy on a
// number field cannot be passed by writing the same value another way, and
// a value no Cedar decimal holds exactly is denied.
func TestNumbersHaveOneCedarForm(t *testing.T) {
	set, err := cedarpolicy.LoadFiles(write(t, `permit (principal, action, resource);
		forbid (principal, action, resource) when { context.args has ratio && context.args.ratio == decimal("0.5") };
		forbid (principal, action, resource) when { context.args has count && context.args.count == 7 };
		forbid (principal, action, resource) when { context.args has weights && context.args.weights.contains(decimal("2.0")) };
		forbid (principal, action, resource) when { context.args has limits && context.args.limits.cpu == decimal("1.25") };`))
	if err != nil {
		t.Fatal(err)
	}
	info := runtime.ToolInfo{Name: "t", Version: "1", Effect: runtime.EffectRead, InputSchema: json.RawMessage(`{"type":"object","properties":{
		"ratio":{"type":"number"},"count":{"type":"integer"},"weights":{"type":"array","items":{"type":"number"}},
		"limits":{"type":"object","additionalProperties":{"type":"number"}}}}`)}
	p := cedarpolicy.New(set, cedarpolicy.Options{})
	decide := func(args string) runtime.Decision {
		return p.Decide(context.Background(), runtime.PolicyRequest{Tool: info, Context: carol, Arguments: []byte(args)})
	}
	for _, args := range []string{
		`{"ratio":0.5}`, `{"ratio":0.50}`, `{"ratio":5e-1}`, `{"ratio":50E-2}`, `{"ratio":0.5000}`,
		`{"count":7}`, `{"count":7.0}`, `{"count":0.7e1}`,
		`{"weights":[1,2]}`, `{"weights":[2.00]}`, `{"weights":[20e-1]}`,
		`{"limits":{"cpu":1.25}}`, `{"limits":{"cpu":125e-2}}`,
	} {
		if d := decide(args); d.Allow || !strings.Contains(d.Reason, "forbidden by") {
			t.Errorf("%s: %+v", args, d)
		}
	}
	// Not exactly a Cedar decimal or Long: denied, never rounded onto an allowed value.
	for _, args := range []string{`{"ratio":0.5000000000000000001}`, `{"ratio":0.12345}`, `{"ratio":1e300}`, `{"count":99999999999999999999}`} {
		if d := decide(args); d.Allow || !strings.Contains(d.Reason, "deny") {
			t.Errorf("%s: %+v", args, d)
		}
	}
	for _, args := range []string{`{"ratio":0.25}`, `{"ratio":1}`, `{"count":8}`, `{"weights":[2.5]}`, `{"limits":{"cpu":1.5}}`} {
		if d := decide(args); !d.Allow {
			t.Errorf("%s: %+v", args, d)
		}
	}
}

// A recursive type's members ($ref to $defs) are typed as their schema
// says at every depth: a "number" member is a decimal however it is spelt.
func TestNumbersThroughRefs(t *testing.T) {
	set, err := cedarpolicy.LoadFiles(write(t, `permit (principal, action, resource);
		forbid (principal, action, resource) when { context.args.where has not && context.args.where.not has above && context.args.where.not.above == decimal("2.0") };`))
	if err != nil {
		t.Fatal(err)
	}
	info := runtime.ToolInfo{Name: "q", Version: "1", Effect: runtime.EffectRead, InputSchema: json.RawMessage(`{"type":"object","properties":{
		"where":{"$ref":"#/$defs/c"}},"$defs":{"c":{"type":"object","properties":{"above":{"type":"number"},"not":{"$ref":"#/$defs/c"}}}}}`)}
	p := cedarpolicy.New(set, cedarpolicy.Options{})
	for _, args := range []string{`{"where":{"not":{"above":2}}}`, `{"where":{"not":{"above":2.00}}}`, `{"where":{"not":{"above":20e-1}}}`} {
		if d := p.Decide(context.Background(), runtime.PolicyRequest{Tool: info, Context: carol, Arguments: []byte(args)}); d.Allow {
			t.Errorf("%s: %+v", args, d)
		}
	}
}

// BenchmarkPolicy compares the policy stage: the default policy and the
// example's Cedar policies, on the same valid read.
func BenchmarkPolicy(b *testing.B) {
	info := generated.ToolSet().Lookup(generated.ToolLookupIncident).Info()
	req := runtime.PolicyRequest{CallID: "c", Tool: info, Context: aliceOnCall, Arguments: []byte(`{"incident_id":"INC-001"}`)}
	for name, p := range map[string]runtime.Policy{"default": runtime.SideEffectPolicy{}, "cedar": incidentPolicy(b)} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !p.Decide(context.Background(), req).Allow {
					b.Fatal("denied")
				}
			}
		})
	}
}

type ratioArgs struct {
	Ratio float64 `json:"ratio"`
	Small float32 `json:"small,omitempty"`
}

// Cedar judges the value the handler will receive, not the literal: a
// float64 member sent as 599999999999999.9999 is 6e14 to the handler, which
// a forbid at 6e14 must stop; a float32 member sent as 4999.9999 is 5000.
func TestCedarJudgesTheHandlersValue(t *testing.T) {
	set, err := cedarpolicy.LoadFiles(write(t, `permit (principal, action, resource);
		forbid (principal, action, resource) when { context.args.ratio.greaterThanOrEqual(decimal("600000000000000.0")) };
		forbid (principal, action, resource) when { context.args has small && context.args.small.greaterThanOrEqual(decimal("5000.0")) };`))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	tool := runtime.NewTool(runtime.ToolInfo{Name: "r", Version: "1", Effect: runtime.EffectRead, Description: "R.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"ratio":{"type":"number"},"small":{"type":"number"}},"required":["ratio"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
		runtime.Handle(func(context.Context, ratioArgs) (struct{}, error) { ran++; return struct{}{}, nil }))
	exec, err := runtime.NewExecutor(keeltest.Of(tool), runtime.WithPolicy(cedarpolicy.New(set, cedarpolicy.Options{})), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for args, allowed := range map[string]bool{
		`{"ratio":599999999999999.9999}`: false,
		`{"ratio":1,"small":4999.9999}`:  false,
		`{"ratio":599999999999999}`:      true,
		`{"ratio":1,"small":4999.5}`:     true,
	} {
		ran = 0
		r := exec.Execute(context.Background(), carol, runtime.ToolCall{ID: "c", Name: "r", Arguments: json.RawMessage(args)})
		if r.OK != allowed || (ran == 1) != allowed {
			t.Errorf("%s: ok %v (handler runs %d), want allowed %v: %+v", args, r.OK, ran, allowed, r.Error)
		}
	}
}

// Cedar gets every text type in the JSON form keel reads it in: json v2
// has no default form for a time.Duration, so every call that set one was
// denied, even under a permit of everything.
func TestCedarSeesEveryTextType(t *testing.T) {
	set, err := cedarpolicy.LoadFiles(write(t, `permit (principal, action, resource);
		forbid (principal, action, resource) when { context.args has wait && context.args.wait == "1h30m0s" };
		forbid (principal, action, resource) when { context.args has price && context.args.price == "13.5" };
		forbid (principal, action, resource) when { context.args has addr && context.args.addr == "192.0.2.66" };`))
	if err != nil {
		t.Fatal(err)
	}
	exec, err := confgen.NewExecutor(runtime.WithPolicy(cedarpolicy.New(set, cedarpolicy.Options{})), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	const id = `"id":"1b4e28ba-2fa1-11d2-883f-0016d3cca427"`
	for args, allowed := range map[string]bool{
		`{` + id + `,"wait":"2s"}`:         true,
		`{` + id + `,"wait":"90m"}`:        false, // the handler's value, 1h30m0s
		`{` + id + `,"price":"12.50"}`:     true,
		`{` + id + `,"price":"13.50"}`:     false, // decimal's text of the value: 13.5
		`{` + id + `,"addr":"192.0.2.1"}`:  true,
		`{` + id + `,"addr":"192.0.2.66"}`: false,
		`{` + id + `,"addr":"fe80::1%eth0","net":"10.0.0.0/8","hosts":["::1"],"level":"HIGH","blob":"aGVsbG8=",` +
			`"owners":{"ops":"1b4e28ba-2fa1-11d2-883f-0016d3cca427"}}`: true,
	} {
		r := exec.Execute(context.Background(), carol, runtime.ToolCall{ID: "c", Name: confgen.ToolTexts, Arguments: json.RawMessage(args)})
		if r.OK != allowed {
			t.Errorf("%s: ok %v, want allowed %v: %+v", args, r.OK, allowed, r.Error)
		}
	}
}
