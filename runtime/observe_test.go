package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/keelgen/keel/runtime"
	"github.com/keelgen/keel/runtime/grant"
)

type observerKey struct{}

// recorder keeps what End saw; untimed also has TimesStages, false.
type recorder struct {
	name    string
	records []runtime.CallRecord
	ctxs    []any // the value Begin put in the context End was given
	digests []string
}

func (o *recorder) Begin(ctx context.Context, _ runtime.ToolCall) context.Context {
	return context.WithValue(ctx, observerKey{}, o.name)
}

func (o *recorder) End(ctx context.Context, r *runtime.CallRecord) {
	o.records = append(o.records, *r)
	o.ctxs = append(o.ctxs, ctx.Value(observerKey{}))
	o.digests = append(o.digests, r.ArgumentsDigest())
}

type untimed struct{ recorder }

func (untimed) TimesStages(context.Context) bool { return false }

// Each observer's End gets the context its own Begin returned and the
// record: the arguments by the digest a grant binds, "" for arguments that
// were not valid; the stages only for an observer that times them (the
// handler's own goroutine counts, so its stage is at least its sleep), one
// record for all of them; and the handler runs under the last Begin's
// context.
func TestObserversSeeTheirContextAndTheRecord(t *testing.T) {
	timed, plain := &recorder{name: "timed"}, &untimed{recorder{name: "plain"}}
	var seen any
	f := newFixture(t, runtime.EffectRead, func(ctx context.Context, a echoArgs) (echoResult, error) {
		seen = ctx.Value(observerKey{})
		time.Sleep(2 * time.Millisecond)
		return okEcho(ctx, a)
	}, runtime.WithObserver(timed), runtime.WithObserver(plain))
	args := `{ "text": "hello",  "count": 2 }`
	if r := f.exec.Execute(context.Background(), runtime.ExecutionContext{Tenant: "acme"}, call(args)); !r.OK {
		t.Fatalf("valid call: %+v", r.Error)
	}
	if r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(`{"text":"NO"}`)); r.Code() != runtime.CodeInvalidArguments {
		t.Fatalf("invalid call: %+v", r)
	}
	if seen != "plain" {
		t.Errorf("the handler's context holds %v, want the last observer's", seen)
	}
	want, err := grant.ArgumentsDigest([]byte(args))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []*recorder{timed, &plain.recorder} {
		if len(o.records) != 2 || o.ctxs[0] != o.name || o.ctxs[1] != o.name {
			t.Fatalf("%s: %d records, contexts %v", o.name, len(o.records), o.ctxs)
		}
		valid, invalid := o.records[0], o.records[1]
		if o.digests[0] != want || o.digests[1] != "" {
			t.Errorf("%s: digests %q, want %q and none", o.name, o.digests, want)
		}
		if valid.Tool != "echo" || valid.Version != "2.1" || valid.Tenant != "acme" || !valid.OK || valid.Decision != "allow" ||
			invalid.Code != runtime.CodeInvalidArguments || invalid.Decision != "" || valid.Duration < 2*time.Millisecond {
			t.Errorf("%s: records %+v and %+v", o.name, valid, invalid)
		}
	}
	if st := timed.records[0].Stages; st.Handler < 2*time.Millisecond || st.Decode <= 0 || st.Output <= 0 {
		t.Errorf("timed stages %+v", st)
	}
	if st := plain.records[0].Stages; st != timed.records[0].Stages {
		t.Errorf("one record, but the observers saw stages %+v and %+v", st, timed.records[0].Stages)
	}

	alone := &untimed{recorder{name: "alone"}}
	f = newFixture(t, runtime.EffectRead, okEcho, runtime.WithObserver(alone))
	if r := f.exec.Execute(context.Background(), runtime.ExecutionContext{}, call(args)); !r.OK {
		t.Fatalf("valid call: %+v", r.Error)
	}
	if st := alone.records[0].Stages; st != (runtime.StageTimes{}) || alone.records[0].Duration <= 0 {
		t.Errorf("no observer times stages, yet they are %+v (duration %v)", st, alone.records[0].Duration)
	}
}
