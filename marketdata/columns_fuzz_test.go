package marketdata

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
)

// FuzzDecodeColumns: decodeColumns never panics, and whatever it accepts
// has one value a day in each column, dates that do not decrease, and
// survives encodeColumns and decodeColumns again bit for bit.
func FuzzDecodeColumns(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 10))
	prices := func(n, places int) []float64 {
		col := make([]float64, n)
		for i := range col {
			col[i] = randomDecimal(r, places)
		}
		return col
	}
	ten := ohlcv.Series{Dates: randomDates(r, calendar.NewDate(2020, 12, 28), 10), Open: prices(10, 2), High: prices(10, 3),
		Low: prices(10, 0), Close: prices(10, 6), Volume: prices(10, 0)}
	ten.Low[4] = math.NaN() // one raw column
	f.Add(encodeColumns(ten))
	f.Add(encodeColumnsV1(ten))
	f.Add(encodeColumns(ohlcv.Series{}))
	f.Add(encodeColumns(ohlcv.Series{Dates: []calendar.Date{calendar.NewDate(1969, 12, 31)}, Open: []float64{-1.5},
		High: []float64{math.Inf(1)}, Low: []float64{0}, Close: []float64{1e-9}, Volume: []float64{1e12}}))
	f.Add([]byte{})
	f.Add([]byte{columnsFormat, 1, 0, 0, 0, 15, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeColumns(t, b)
		if len(b) >= columnsHeader {
			// The same bytes with the size they declare made right, so
			// that mutations reach past the header.
			b = append([]byte(nil), b...)
			binary.LittleEndian.PutUint32(b[5:], uint32(len(b)))
			checkDecodeColumns(t, b)
		}
	})
}

// checkDecodeColumns checks the properties FuzzDecodeColumns states for b.
func checkDecodeColumns(t *testing.T, b []byte) {
	t.Helper()
	c, err := decodeColumns(b)
	if err != nil {
		return
	}
	n := c.Len()
	for j, col := range [][]float64{c.Open, c.High, c.Low, c.Close, c.Volume} {
		if len(col) != n {
			t.Fatalf("column %d has %d values for %d days", j, len(col), n)
		}
	}
	for i := 1; i < n; i++ {
		if c.Dates[i].Before(c.Dates[i-1]) {
			t.Fatalf("day %d: %v before %v", i, c.Dates[i], c.Dates[i-1])
		}
	}
	again, err := decodeColumns(encodeColumns(c))
	if err != nil {
		t.Fatalf("re-encoded columns do not decode: %v", err)
	}
	mustEqualColumns(t, again, c)
}
