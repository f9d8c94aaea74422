package marketdata

import (
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
)

// columnsFormat is the first byte of an encoded ohlcv.Series. Format 1, raw
// int32 days and float64 bits, is no longer read: such a copy fails to
// decode and is rebuilt.
const columnsFormat = 2

// columnsHeader is the length of the header: the format byte, the count
// of days and the length of the whole encoding.
const columnsHeader = 9

// rawColumn is the column header byte of a column of float64 bits; the
// header of a scaled column is its scale, 0 to maxScale.
const (
	rawColumn = 0x80
	maxScale  = 9
)

// pow10 holds 10^s for each scale s, all exact in float64.
var pow10 = [maxScale + 1]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// maxDay bounds the encoded dates to ±maxDay days from 1970-01-01, about
// 5.8 million years, so that no date arithmetic can overflow.
const maxDay = 1<<31 - 1

// epoch is day 0 of encoded dates.
var epoch = calendar.NewDate(1970, time.January, 1)

// errCorruptColumns is returned for an encoding that does not decode.
var errCorruptColumns = errors.New("marketdata: corrupt price columns")

// encodeColumns writes c, whose dates must not decrease, compactly:
//
//	format  byte, columnsFormat (2)
//	n       uint32, little endian: the number of days
//	size    uint32, little endian: the length of the whole encoding
//	dates   the first as a signed varint of days since 1970-01-01,
//	        then each as an unsigned varint of days since the one before
//	open, high, low, close, volume, each as a column:
//	        a scale byte s in 0..9, then n signed (zigzag) varints, each
//	        value's m = x·10^s minus the m of the value before (0 first);
//	        or the byte 0x80, then n float64 bits, little endian
//
// A column's scale is the smallest s for which every value x has an
// integer m with |m| < 2^53 such that float64(m)/10^s is x, bit for bit:
// encodeColumns checks this for each value, so decoding is exact by
// construction, not by assumption. For a price parsed from a decimal with
// s ≤ 9 places and at most 15 digits the check passes: 10^s is exact in
// float64 and IEEE division is correctly rounded, so m/10^s is the float64
// nearest the decimal m·10^-s, the same float64 that parsing the decimal
// gives. A column with a value
// that fits no scale (more than 9 places, |m| ≥ 2^53, -0, NaN, ±Inf) is
// stored raw. Ten years of two-decimal prices and whole volumes take about
// 11 bytes a day, a quarter of the 44 of format 1.
//
// encodeColumns panics if the dates decrease or a column's length is not
// the number of dates: both are programmer errors, as PriceColumns reads
// one row per date in date order.
func encodeColumns(c ohlcv.Series) []byte {
	n := c.Len()
	b := make([]byte, columnsHeader, columnsHeader+5+16*n)
	b[0] = columnsFormat
	binary.LittleEndian.PutUint32(b[1:], uint32(n))
	if n > 0 {
		prev := c.Dates[0].Sub(epoch)
		b = binary.AppendVarint(b, int64(prev))
		for _, d := range c.Dates[1:] {
			day := d.Sub(epoch)
			if day < prev {
				panic("marketdata: encodeColumns: dates out of order")
			}
			b = binary.AppendUvarint(b, uint64(day-prev))
			prev = day
		}
	}
	for _, col := range [...][]float64{c.Open, c.High, c.Low, c.Close, c.Volume} {
		if len(col) != n {
			panic("marketdata: encodeColumns: column length mismatch")
		}
		b = appendColumn(b, col)
	}
	binary.LittleEndian.PutUint32(b[5:], uint32(len(b)))
	return b
}

// appendColumn appends col encoded at its scale, or raw.
func appendColumn(b []byte, col []float64) []byte {
	s := columnScale(col)
	if s < 0 {
		b = append(b, rawColumn)
		for _, x := range col {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		return b
	}
	b = append(b, byte(s))
	p := pow10[s]
	var prev int64
	for _, x := range col {
		m := int64(math.Round(x * p))
		b = binary.AppendVarint(b, m-prev)
		prev = m
	}
	return b
}

// columnScale returns the smallest scale s at which every value of col
// fits (see [scaleFits]), or -1 if there is none.
func columnScale(col []float64) int {
	s := 0
	for i := 0; i < len(col); {
		if scaleFits(col[i], s) {
			i++
			continue
		}
		if s++; s > maxScale {
			return -1
		}
		// Fitting at a smaller scale does not always imply fitting at a
		// larger one (|m| may pass 2^53): check every value again.
		i = 0
	}
	return s
}

// scaleFits reports whether x is float64(m)/10^s, bit for bit, for
// m = round(x·10^s) with |m| < 2^53.
func scaleFits(x float64, s int) bool {
	p := pow10[s]
	m := math.Round(x * p)
	return math.Abs(m) < 1<<53 && math.Float64bits(float64(int64(m))/p) == math.Float64bits(x)
}

// decodeColumns reads what encodeColumns wrote. It returns an error, and
// never panics, on any other input: another format, a wrong length,
// truncated or trailing bytes, an overlong varint or a date out of range.
func decodeColumns(b []byte) (ohlcv.Series, error) {
	if len(b) < columnsHeader || b[0] != columnsFormat {
		return ohlcv.Series{}, errors.New("marketdata: unknown price columns format")
	}
	n := binary.LittleEndian.Uint32(b[1:])
	if uint64(binary.LittleEndian.Uint32(b[5:])) != uint64(len(b)) {
		return ohlcv.Series{}, errors.New("marketdata: price columns of the wrong length")
	}
	b = b[columnsHeader:]
	// Each day takes at least one byte for its date and one in each column,
	// and each column a header byte: this bounds what a corrupt n allocates.
	if len(b) < 5 || uint64(n) > uint64(len(b)-5)/6 {
		return ohlcv.Series{}, errCorruptColumns
	}
	c := ohlcv.Series{Dates: make([]calendar.Date, n)}
	if n > 0 {
		day, k := binary.Varint(b)
		if k <= 0 || day < -maxDay || day > maxDay {
			return ohlcv.Series{}, errCorruptColumns
		}
		b = b[k:]
		d := epoch.AddDays(int(day))
		c.Dates[0] = d
		for i := 1; i < len(c.Dates); i++ {
			step, k := uvarint(b)
			if k <= 0 || step > uint64(maxDay-day) {
				return ohlcv.Series{}, errCorruptColumns
			}
			b = b[k:]
			day += int64(step)
			d = nextDate(d, int(step))
			c.Dates[i] = d
		}
	}
	cols := make([]float64, 5*int(n)) // one allocation for the five columns
	for i := 0; i < 5; i++ {
		col := cols[i*int(n) : (i+1)*int(n) : (i+1)*int(n)]
		var ok bool
		if b, ok = decodeColumn(col, b); !ok {
			return ohlcv.Series{}, errCorruptColumns
		}
	}
	if len(b) != 0 {
		return ohlcv.Series{}, errCorruptColumns
	}
	c.Open, c.High, c.Low, c.Close, c.Volume = cols[:n:n], cols[n:2*n:2*n], cols[2*n:3*n:3*n], cols[3*n:4*n:4*n], cols[4*n:]
	return c, nil
}

// decodeColumn fills col from the column at the start of b and returns
// the rest of b, or false if b does not hold such a column.
func decodeColumn(col []float64, b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return nil, false
	}
	h := b[0]
	b = b[1:]
	switch {
	case h == rawColumn:
		if len(b)/8 < len(col) {
			return nil, false
		}
		for i := range col {
			col[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		return b[8*len(col):], true
	case h > maxScale:
		return nil, false
	}
	p := pow10[h] // 1 for whole numbers: x/1 is x exactly
	var m int64
	for i := range col {
		u, k := uvarint(b)
		if k <= 0 {
			return nil, false
		}
		b = b[k:]
		m += int64(u>>1) ^ -int64(u&1) // zigzag
		col[i] = float64(m) / p
	}
	return b, true
}

// uvarint is [binary.Uvarint] with the one- and two-byte cases inline.
func uvarint(b []byte) (uint64, int) {
	if len(b) >= 2 {
		if b[0] < 0x80 {
			return uint64(b[0]), 1
		}
		if b[1] < 0x80 {
			return uint64(b[0]&0x7f) | uint64(b[1])<<7, 2
		}
	}
	return binary.Uvarint(b)
}

// nextDate returns d plus n ≥ 0 days for a valid d. The few days between
// two trading days are added by walking over month ends, without the
// conversion through a day count that [calendar.Date.AddDays] makes.
func nextDate(d calendar.Date, n int) calendar.Date {
	if n > 62 {
		return d.AddDays(n)
	}
	d.Day += n
	for d.Day > 28 {
		dim := daysInMonth(d.Year, d.Month)
		if d.Day <= dim {
			break
		}
		d.Day -= dim
		if d.Month++; d.Month > time.December {
			d.Month = time.January
			d.Year++
		}
	}
	return d
}

// daysInMonth returns the number of days in month m of year y.
func daysInMonth(y int, m time.Month) int {
	switch m {
	case time.February:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}
