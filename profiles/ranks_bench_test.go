package profiles

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSpearman ranks and correlates two series of 2,520 values, the
// length of ten years of daily bars: the kernel of the indicator
// sensitivity, eight times per profile.
func BenchmarkSpearman(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := make([]float64, 2520), make([]float64, 2520)
	for i := range x {
		x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	b.ReportAllocs()
	for b.Loop() {
		spearman(x, y)
	}
}
