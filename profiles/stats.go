package profiles

import (
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/stat"
)

// tradingDays is the number of trading days in a year, the annualisation
// factor of volatilities (sqrt) and Sharpe ratios (sqrt).
const tradingDays = 252

// volFloor is the annualised volatility below which a reading is taken as
// exactly 0: the rounding noise of logarithms, not price moves.
const volFloor = 1e-9

// rollingVol returns the annualised realised volatility of the daily log
// returns ret over the last w returns at each index,
//
//	sqrt(252) * stddev(ret[t-w+1..t])
//
// with the unbiased sample standard deviation, NaN where fewer than w
// returns exist (ret[0] is NaN, so the first value is at index w). Values
// below 1e-9 are set to 0.
func rollingVol(ret []float64, w int) []float64 {
	out := make([]float64, len(ret))
	ann := math.Sqrt(tradingDays)
	for t := range out {
		if t < w {
			out[t] = math.NaN()
			continue
		}
		v := ann * stat.StdDev(ret[t-w+1:t+1], nil)
		if v < volFloor {
			v = 0 // rounding noise of a price moving by a constant factor
		}
		out[t] = v
	}
	return out
}

// annualSharpe returns sqrt(252) * mean(r) / stddev(r) of the daily returns
// r, with the unbiased sample standard deviation. It returns 0 when r has
// fewer than 2 values or no dispersion (no position, no evidence).
func annualSharpe(r []float64) float64 {
	if len(r) < 2 {
		return 0
	}
	m, s := stat.MeanStdDev(r, nil)
	if !(s > 1e-15) || math.IsNaN(m) {
		return 0
	}
	return math.Sqrt(tradingDays) * m / s
}

// sharpeFromSums is annualSharpe for n returns with the given sum and sum of
// squares.
func sharpeFromSums(sum, sumSq float64, n int) float64 {
	if n < 2 {
		return 0
	}
	m := sum / float64(n)
	v := (sumSq - float64(n)*m*m) / float64(n-1)
	if !(v > 1e-30) {
		return 0
	}
	return math.Sqrt(tradingDays) * m / math.Sqrt(v)
}

// logistic returns 1 / (1 + exp(-x)).
func logistic(x float64) float64 {
	return 1 / (1 + math.Exp(-x))
}

// ranks writes into dst the ranks 1..n of x with ties given their average
// rank (the ranking used by Spearman's rho); sorted and end are scratch of
// len(x). x must hold no NaN. The values are ordered once with
// [radixOrder]: sorted holds them ascending and end the position in x of
// each. Every run [lo, hi) of equal values then gives its members the
// average rank (lo+1 + hi) / 2. -0 and +0 sort next to each other and,
// being equal, share their rank.
func ranks(dst, x, sorted []float64, end []int) {
	n := len(x)
	idx := radixOrder(end, x)
	for k, i := range idx {
		sorted[k] = x[i]
	}
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && sorted[hi] == sorted[lo] {
			hi++
		}
		r := float64(lo+1+hi) / 2
		for k := lo; k < hi; k++ {
			dst[idx[k]] = r
		}
		lo = hi
	}
}

// radixOrder writes to dst (len(x)) the positions 0..len(x)-1 of x ordered
// by value ascending, equal values in the order of their positions, and
// returns dst. It is an LSD radix sort of the values' order-preserving bit
// patterns, a byte per pass, the passes where every key has the same byte
// skipped; NaNs sort after +Inf (positive ones) or before -Inf (negative
// ones), -0 just before +0.
func radixOrder(dst []int, x []float64) []int {
	n := len(x)
	sc := radixPool.Get().(*radixScratch)
	defer radixPool.Put(sc)
	sc.grow(n)
	keys, tmpKeys := sc.keys[:n], sc.tmpKeys[:n]
	idx, tmpIdx := sc.idx[:n], sc.tmpIdx[:n]
	for i, v := range x {
		b := math.Float64bits(v)
		if b>>63 == 1 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		keys[i], idx[i] = b, i
	}
	// The histograms of all eight bytes in one pass over the keys.
	var count [8][256]int
	for _, k := range keys {
		for p := range count {
			count[p][byte(k>>(8*p))]++
		}
	}
	for p := range count {
		c := &count[p]
		shift := uint(8 * p)
		if n > 0 && c[byte(keys[0]>>shift)] == n {
			continue // every key has this byte: the pass would not move anything
		}
		sum := 0
		for d, v := range c {
			c[d] = sum
			sum += v
		}
		for i, k := range keys {
			d := byte(k >> shift)
			tmpKeys[c[d]], tmpIdx[c[d]] = k, idx[i]
			c[d]++
		}
		keys, tmpKeys = tmpKeys, keys
		idx, tmpIdx = tmpIdx, idx
	}
	copy(dst, idx)
	return dst
}

// radixScratch holds the buffers of [radixOrder], reused through
// radixPool: a profile sorts a dozen series of thousands of values, and
// fresh buffers for each made a third of a market-scale build's
// allocations, and the collector's work that comes with them.
type radixScratch struct {
	keys, tmpKeys []uint64
	idx, tmpIdx   []int
}

// radixPool keeps the buffers of [radixOrder] between calls.
var radixPool = sync.Pool{New: func() any { return new(radixScratch) }}

// grow makes each buffer of s hold at least n values.
func (s *radixScratch) grow(n int) {
	if cap(s.keys) < n {
		s.keys, s.tmpKeys = make([]uint64, n), make([]uint64, n)
		s.idx, s.tmpIdx = make([]int, n), make([]int, n)
	}
	s.keys, s.tmpKeys = s.keys[:cap(s.keys)], s.tmpKeys[:cap(s.tmpKeys)]
	s.idx, s.tmpIdx = s.idx[:cap(s.idx)], s.tmpIdx[:cap(s.tmpIdx)]
}

// sortFloats sorts x ascending in place, as slices.Sort does for values
// without NaN, by [radixOrder].
func sortFloats(x []float64) {
	order := radixOrder(make([]int, len(x)), x)
	sorted := make([]float64, len(x))
	for k, i := range order {
		sorted[k] = x[i]
	}
	copy(x, sorted)
}

// medianTracker keeps a multiset of values, chosen from a fixed universe
// known in advance, and answers the median of those added so far in
// O(log n) per operation (a Fenwick tree over the values' sorted order).
type medianTracker struct {
	sorted []float64 // the universe, ascending
	tree   []int     // Fenwick tree of counts, 1-based
	n      int
	logN   int
}

func newMedianTracker(universe []float64) *medianTracker {
	s := slices.Clone(universe)
	sortFloats(s)
	lg := 1
	for 1<<lg <= len(s) {
		lg++
	}
	return &medianTracker{sorted: s, tree: make([]int, len(s)+1), logN: lg}
}

// add inserts v, which must be in the universe.
func (m *medianTracker) add(v float64) {
	i, _ := slices.BinarySearch(m.sorted, v)
	for i++; i < len(m.tree); i += i & -i {
		m.tree[i]++
	}
	m.n++
}

// kth returns the k-th smallest value added (1-based).
func (m *medianTracker) kth(k int) float64 {
	pos := 0
	for b := 1 << m.logN; b > 0; b >>= 1 {
		if next := pos + b; next < len(m.tree) && m.tree[next] < k {
			pos = next
			k -= m.tree[next]
		}
	}
	return m.sorted[pos] // pos is the 0-based index of the answer
}

// median returns the median of the values added: the middle one, or the
// mean of the two middle ones.
func (m *medianTracker) median() float64 {
	if m.n == 0 {
		return math.NaN()
	}
	if m.n%2 == 1 {
		return m.kth(m.n/2 + 1)
	}
	return (m.kth(m.n/2) + m.kth(m.n/2+1)) / 2
}
