// Package lru is a least-recently-used cache bounded by the bytes of its
// values, whose entries are tagged with the price version they were
// computed from.
//
// It is the memory behind the series cache of package studies and the
// encoded-answer cache of package server. A lookup names the version of
// the asset's prices it wants; an entry computed from older prices
// misses and is dropped, so no message between instances is needed to
// invalidate anything: marketdata.Versions, kept current by
// LISTEN/NOTIFY on PostgreSQL, says which version is current.
//
//	c := lru.New(64 << 20) // at most 64 MiB of values
//	c.Put(key, version, series, size)
//	if v, ok := c.Get(key, version); ok {
//		// v was computed from these very prices
//	}
package lru
