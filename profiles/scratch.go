package profiles

// scratch is the memory of one asset's profile that does not outlive it:
// the derived columns of the asset, the indicators' outputs, the
// strategies' positions and the buffers of the sorts. A profile takes its
// buffers from it one after the other; [scratch.reset] then hands the same
// buffers, in the same order, to the next asset, so a worker that profiles
// thousands of assets of one length allocates them once rather than some
// 800 KB an asset.
//
// A nil *scratch allocates every buffer afresh, for the callers that
// profile one asset ([Compute], [Universe.Compute]). A scratch is not safe
// for concurrent use: each worker of [Universe.ComputeAll] and
// [Universe.ComputeAllFrom] has its own.
type scratch struct {
	fs [][]float64
	nf int // buffers of fs handed out since the last reset
	is [][]int
	ni int
	bs [][]int8
	nb int
	ds [][]int32
	nd int
}

// reset makes every buffer of s free for the next asset. The buffers
// handed out before must not be used after it.
func (s *scratch) reset() {
	if s != nil {
		s.nf, s.ni, s.nb, s.nd = 0, 0, 0, 0
	}
}

// floats returns a buffer of n float64s whose values are unspecified:
// the caller writes each before reading it.
func (s *scratch) floats(n int) []float64 {
	if s == nil {
		return make([]float64, n)
	}
	return nextBuf(&s.fs, &s.nf, n)
}

// ints is [scratch.floats] for ints.
func (s *scratch) ints(n int) []int {
	if s == nil {
		return make([]int, n)
	}
	return nextBuf(&s.is, &s.ni, n)
}

// int32s is [scratch.floats] for int32s.
func (s *scratch) int32s(n int) []int32 {
	if s == nil {
		return make([]int32, n)
	}
	return nextBuf(&s.ds, &s.nd, n)
}

// int8s returns a buffer of n int8s, all zero.
func (s *scratch) int8s(n int) []int8 {
	if s == nil {
		return make([]int8, n)
	}
	b := nextBuf(&s.bs, &s.nb, n)
	clear(b)
	return b
}

// nextBuf returns the buffer *k of *bufs, made to hold n values if it
// holds fewer, and moves *k past it.
func nextBuf[T any](bufs *[][]T, k *int, n int) []T {
	if *k == len(*bufs) {
		*bufs = append(*bufs, nil)
	}
	b := &(*bufs)[*k]
	*k++
	if cap(*b) < n {
		*b = make([]T, n)
	}
	return (*b)[:n]
}
