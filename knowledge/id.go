package knowledge

import (
	"crypto/sha1"
	"encoding/hex"
)

// namespace is the UUID under which every content id is derived. It is the
// version 5 UUID of the name "https://github.com/tradekit/tradekit/knowledge"
// in the RFC 9562 URL namespace
// (adafcebb-cd19-51f3-bb2c-4280f7c9c67a); it must never change, or every id would.
var namespace = [16]byte{
	0xad, 0xaf, 0xce, 0xbb, 0xcd, 0x19, 0x51, 0xf3,
	0xbb, 0x2c, 0x42, 0x80, 0xf7, 0xc9, 0xc6, 0x7a,
}

// newID returns the name-based (version 5, SHA-1) UUID of kind + ":" + slug
// in [namespace], formatted 8-4-4-4-12 in lowercase hex:
//
//	uuid = SHA-1(namespace || kind ":" slug)[0:16], version 5, variant RFC 9562
//
// The same kind and slug always give the same id, across runs and machines.
func newID(kind, slug string) string {
	h := sha1.New()
	h.Write(namespace[:])
	h.Write([]byte(kind))
	h.Write([]byte{':'})
	h.Write([]byte(slug))
	var sum [sha1.Size]byte
	h.Sum(sum[:0])
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // variant 10xx
	var buf [36]byte
	hex.Encode(buf[0:8], u[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], u[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], u[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], u[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:36], u[10:16])
	return string(buf[:])
}
