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
	return rollingVolInto(make([]float64, len(ret)), ret, w)
}

// rollingVolInto is [rollingVol] writing into out, of the length of ret,
// and returning it.
func rollingVolInto(out, ret []float64, w int) []float64 {
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
// len(x). x must hold no NaN. It is [ranksInto] with a buffer of its own.
func ranks(dst, x, sorted []float64, end []int) {
	ranksInto(dst, x, sorted, end, make([]int, len(x)))
}

// ranksInto is [ranks] taking its scratch, sorted, end and tmp of len(x),
// from the caller. The values are ordered once with [orderInto]: sorted
// holds them ascending and end the position in x of each. Every run
// [lo, hi) of equal values then gives its members the average rank
// (lo+1 + hi) / 2. -0 and +0, being equal, share their rank.
func ranksInto(dst, x, sorted []float64, end, tmp []int) {
	n := len(x)
	orderInto(sorted, end, x, dst, tmp) // dst is scratch until the ranks are written
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && sorted[hi] == sorted[lo] {
			hi++
		}
		r := float64(lo+1+hi) / 2
		for k := lo; k < hi; k++ {
			dst[end[k]] = r
		}
		lo = hi
	}
}

// Bucket sort parameters of [orderInto].
const (
	maxBuckets  = 2048 // buckets of one distribution pass, at most
	bucketDepth = 3    // distribution passes into a bucket before radixOrder takes over
	insertMax   = 24   // a bucket of at most this many values is sorted by insertion
)

// orderInto writes x's values ascending into vals and their positions in
// x into idx, equal values in the order of their positions; tmpV and tmpI
// are scratch. All five have the length of x, and x may contain no NaN
// (one makes it fall back to [radixOrder], which orders them).
//
// It is a bucket sort: the values are distributed by
//
//	bucket(v) = floor((v - min) * B / (max - min)),  B = min(len(x), 2048)
//
// which never puts a smaller value in a later bucket (a subtraction and a
// product by a positive number round monotonically), stably. When no
// bucket holds more than 24 values one insertion sort of the whole then
// finishes (no value is more than 23 places from its own); otherwise each
// bucket is sorted the same way in turn, by insertion once it holds at
// most 24 values. For the series a profile ranks (indicators, returns,
// volatilities: a few values a bucket) this is four passes over the data
// rather than the nine of a radix sort of 64-bit keys. A bucket still
// large after three distributions (values piled up against an extreme
// outlier), and a range that is not finite, are sorted by [radixOrder],
// so no input costs more than that sort. -0 and +0 are equal here, and
// keep their order of position, where radixOrder puts -0 first.
func orderInto(vals []float64, idx []int, x, tmpV []float64, tmpI []int) {
	n := len(x)
	lo, hi, scale, ok := bucketScale(x)
	if n <= insertMax || !ok || lo == hi {
		copy(vals, x)
		for i := range idx {
			idx[i] = i
		}
		switch {
		case n <= insertMax:
			insertionSort(vals, idx)
		case !ok:
			radixSort(vals, idx, tmpV, tmpI)
		}
		// lo == hi: all equal, already in order of position
		return
	}
	// The first distribution reads x and its positions directly.
	b := min(n, maxBuckets)
	var end [maxBuckets + 1]int32
	for _, v := range x {
		end[min(int((v-lo)*scale), b-1)+1]++
	}
	most := prefixSums(end[:b+1])
	for i, v := range x {
		k := min(int((v-lo)*scale), b-1)
		vals[end[k]], idx[end[k]] = v, i
		end[k]++
	}
	if most <= insertMax {
		// Every value is at most insertMax-1 places from its own: one
		// insertion sort of the whole is the buckets' sorts in one loop.
		insertionSort(vals, idx)
		return
	}
	sortBuckets(vals, idx, tmpV, tmpI, end[:b], bucketDepth-1)
}

// bucketScale returns the least and greatest of x and the factor
// B / (hi - lo) of [orderInto]'s bucket formula, with ok false when x holds
// a NaN or the factor is not finite and positive (infinite values, a range
// overflowing or too narrow to scale): radixOrder's case. With lo == hi
// every value is equal.
func bucketScale(x []float64) (lo, hi, scale float64, ok bool) {
	if len(x) == 0 {
		return 0, 0, 0, true
	}
	lo, hi = x[0], x[0]
	nan := false
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
		nan = nan || v != v
	}
	if nan {
		return lo, hi, 0, false
	}
	if lo == hi {
		return lo, hi, 0, true
	}
	scale = float64(min(len(x), maxBuckets)) / (hi - lo)
	return lo, hi, scale, scale > 0 && !math.IsInf(scale, 0)
}

// prefixSums turns c, the size of bucket k at c[k+1] (c[0] = 0), into the
// start of each bucket at c[k], and returns the largest size.
func prefixSums(c []int32) int {
	most := int32(0)
	for k := 1; k < len(c); k++ {
		most = max(most, c[k])
		c[k] += c[k-1]
	}
	return int(most)
}

// sortBuckets sorts in place each bucket of vals (with idx), the buckets
// ending at end[0], end[1], …, with depth distributions left, the rest of
// the method of [orderInto]; tmpV and tmpI are scratch of the same length.
func sortBuckets(vals []float64, idx []int, tmpV []float64, tmpI []int, end []int32, depth int) {
	from := 0
	for _, e := range end {
		to := int(e)
		if to-from > 1 {
			bucketSort(vals[from:to], idx[from:to], tmpV[from:to], tmpI[from:to], depth)
		}
		from = to
	}
}

// bucketSort sorts vals ascending in place, stably, carrying idx along,
// with scratch tmpV and tmpI of the same length, by the method of
// [orderInto] with depth distributions left before radixOrder.
func bucketSort(vals []float64, idx []int, tmpV []float64, tmpI []int, depth int) {
	n := len(vals)
	if n <= insertMax {
		insertionSort(vals, idx)
		return
	}
	lo, hi, scale, ok := bucketScale(vals)
	switch {
	case !ok || depth == 0:
		radixSort(vals, idx, tmpV, tmpI)
		return
	case lo == hi:
		return // all equal: already in order of position
	}
	b := min(n, maxBuckets)
	var end [maxBuckets + 1]int32
	for _, v := range vals {
		end[min(int((v-lo)*scale), b-1)+1]++
	}
	most := prefixSums(end[:b+1])
	for i, v := range vals {
		k := min(int((v-lo)*scale), b-1)
		tmpV[end[k]], tmpI[end[k]] = v, idx[i]
		end[k]++
	}
	if most <= insertMax {
		insertionSort(tmpV, tmpI)
	} else {
		sortBuckets(tmpV, tmpI, vals, idx, end[:b], depth-1)
	}
	copy(vals, tmpV)
	copy(idx, tmpI)
}

// insertionSort sorts vals ascending, stably, carrying idx along.
func insertionSort(vals []float64, idx []int) {
	for i := 1; i < len(vals); i++ {
		v, p := vals[i], idx[i]
		j := i
		for ; j > 0 && vals[j-1] > v; j-- {
			vals[j], idx[j] = vals[j-1], idx[j-1]
		}
		vals[j], idx[j] = v, p
	}
}

// radixSort sorts vals ascending by [radixOrder], carrying idx along, with
// scratch tmpV and tmpI of the same length.
func radixSort(vals []float64, idx []int, tmpV []float64, tmpI []int) {
	order := radixOrder(tmpI, vals)
	for k, i := range order {
		tmpV[k], order[k] = vals[i], idx[i]
	}
	copy(vals, tmpV)
	copy(idx, tmpI)
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
// radixPool. radixOrder is [orderInto]'s fallback now (NaN, infinities,
// values piled against an outlier), rare in a profile, so a pool shared
// by the workers is enough.
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
// without NaN, by [orderInto].
func sortFloats(x []float64) {
	n := len(x)
	vals := make([]float64, n)
	orderInto(vals, make([]int, n), x, make([]float64, n), make([]int, n))
	copy(x, vals)
}

// selectKth reorders x so that x[k] holds the value sorting would put
// there, with no greater value before it and no smaller one after: Hoare's
// selection, with three-way partitions around the median of the first,
// middle and last values, and slices.Sort once 16 values are left.
// x must hold no NaN. Each partition keeps its pivot's equal values out
// of the range left, so it ends, and on the series it serves (a history
// of volatilities) in about 2·len(x) comparisons.
func selectKth(x []float64, k int) {
	lo, hi := 0, len(x) // x[k] is one of x[lo:hi]
	for hi-lo > 16 {
		a, b, c := x[lo], x[lo+(hi-lo)/2], x[hi-1]
		p := max(min(a, b), min(max(a, b), c))
		// x[lo:lt] < p, x[lt:i] == p, x[gt:hi] > p
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch v := x[i]; {
			case v < p:
				x[lt], x[i] = v, x[lt]
				lt++
				i++
			case v > p:
				gt--
				x[i], x[gt] = x[gt], v
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return // x[k] == p, in place
		}
	}
	slices.Sort(x[lo:hi])
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
