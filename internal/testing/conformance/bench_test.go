package conformance_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/keelgen/keel/internal/testing/conformance"
	"github.com/keelgen/keel/internal/testing/conformance/generated"
	"github.com/keelgen/keel/runtime"
)

// batchArgs are batch arguments of at least size bytes: rows with a
// patterned id, a bounded number and some text.
func batchArgs(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"rows":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"R-%06d","n":%d,"text":"row %d of the batch, with a few words"}`, i, i%1000, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// BenchmarkLargeArguments sends batch arguments of 64 KiB and 1 MiB through
// the executor: the time per byte stays flat (one pass, no generic map).
// Its peer, BenchmarkLargeArgumentsFloor, only decodes the same bytes with
// json v2, unchecked.
func BenchmarkLargeArguments(b *testing.B) {
	exec, err := generated.NewExecutor(runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithLimits(runtime.Limits{MaxArgumentBytes: 2 << 20}))
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{64 << 10, 1 << 20} {
		args := batchArgs(size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(args)))
			b.ReportAllocs()
			for b.Loop() {
				r := exec.Execute(context.Background(), runtime.ExecutionContext{}, runtime.ToolCall{ID: "b", Name: generated.ToolBatch, Arguments: args})
				if !r.OK {
					b.Fatal(r.Error)
				}
			}
		})
	}
}

func BenchmarkLargeArgumentsFloor(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20} {
		args := batchArgs(size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(args)))
			b.ReportAllocs()
			for b.Loop() {
				var a conformance.BatchArgs
				if err := jsonv2.Unmarshal(args, &a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
