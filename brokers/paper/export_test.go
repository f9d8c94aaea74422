package paper

// SetMatchBatch sets how many open orders a pass of Match reads at a
// time, until the returned function restores it.
func SetMatchBatch(n int) (restore func()) {
	old := matchBatch
	matchBatch = n
	return func() { matchBatch = old }
}

// MaxOpen returns the broker's cap of open orders per account.
func (b *Broker) MaxOpen() int { return b.maxOpen }
