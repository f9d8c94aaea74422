package dbcopy

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// checksum is the checksum of a table's rows, whatever their order: the
// sum, modulo 2^256, of the SHA-256 of each row's canonical form. Equal
// multisets of rows have equal checksums; the order rows are read in,
// which each database's collation and storage decide, does not matter.
type checksum struct {
	sum  [4]uint64 // big-endian words of the 256-bit sum
	rows int64
	buf  []byte
}

// add adds the row of canonical values vals of tables's columns.
func (c *checksum) add(t *table, vals []any) {
	b := c.buf[:0]
	for i, v := range vals {
		if v == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		lenAt := len(b)
		b = append(b, 0, 0, 0, 0)
		b = appendCanonical(b, t.cols[i].kind, v)
		binary.BigEndian.PutUint32(b[lenAt:], uint32(len(b)-lenAt-4))
	}
	c.buf = b
	h := sha256.Sum256(b)
	var carry uint64
	for i := 3; i >= 0; i-- {
		w := binary.BigEndian.Uint64(h[i*8:])
		s := c.sum[i] + w
		c1 := uint64(0)
		if s < w {
			c1 = 1
		}
		s2 := s + carry
		if s2 < s {
			c1 = 1
		}
		c.sum[i], carry = s2, c1
	}
	c.rows++
}

// String returns the checksum in hex.
func (c *checksum) String() string {
	var b [32]byte
	for i, w := range c.sum {
		binary.BigEndian.PutUint64(b[i*8:], w)
	}
	return hex.EncodeToString(b[:])
}
