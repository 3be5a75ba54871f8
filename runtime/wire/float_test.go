package wire

import (
	"math"
	"math/rand/v2"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

// A float is written as json v2 writes a float64 or a float32, bit for
// bit: edge cases and a million random values of each size.
func TestFloatsAreWrittenAsJSONv2Does(t *testing.T) {
	cases := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.999999e-7, 1e21, 999999999999999900000, 1e-7, 5e-324, math.MaxFloat64,
		math.SmallestNonzeroFloat32, math.MaxFloat32, 123456789.125, 1e20, 1.5e-9}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		cases = append(cases, math.Float64frombits(r.Uint64()))
	}
	for _, f := range cases {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		want64, _ := jsonv2.Marshal(f)
		if got := appendFloat(nil, f, 64); string(got) != string(want64) {
			t.Fatalf("%v as a float64: %s, json v2 %s", f, got, want64)
		}
		if f32 := float32(f); !math.IsInf(float64(f32), 0) {
			want32, _ := jsonv2.Marshal(f32)
			if got := appendFloat(nil, f, 32); string(got) != string(want32) {
				t.Fatalf("%v as a float32: %s, json v2 %s", f, got, want32)
			}
		}
	}
}
