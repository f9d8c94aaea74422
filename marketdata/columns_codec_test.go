package marketdata

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
)

// randomDates returns n ascending dates from start, mostly a few days
// apart, sometimes the same day or months or years later.
func randomDates(r *rand.Rand, start calendar.Date, n int) []calendar.Date {
	ds := make([]calendar.Date, n)
	d := start
	for i := range ds {
		ds[i] = d
		switch k := r.IntN(100); {
		case k < 2:
		case k < 5:
			d = d.AddDays(30 + r.IntN(2000))
		default:
			d = d.AddDays(1 + r.IntN(7))
		}
	}
	return ds
}

// randomDecimal returns a decimal with places digits after the point and
// a magnitude from 0.0001 to 1e7, and its float64 as strconv parses it.
func randomDecimal(r *rand.Rand, places int) float64 {
	x := math.Pow(10, -4+11*r.Float64())
	s := strconv.FormatFloat(x, 'f', places, 64)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return f
}

func TestColumnsRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	const n = 500
	decimals := func(places func() int) []float64 {
		col := make([]float64, n)
		for i := range col {
			col[i] = randomDecimal(r, places())
		}
		return col
	}
	fixed := func(p int) func() int { return func() int { return p } }
	mixed := func() int { return r.IntN(7) }
	volumes := make([]float64, n)
	for i := range volumes {
		volumes[i] = float64(r.Int64N(1e12 + 1))
	}
	randomBits := make([]float64, n)
	for i := range randomBits {
		randomBits[i] = math.Float64frombits(r.Uint64())
	}
	negative := decimals(mixed)
	for i := range negative {
		if i%3 != 0 && negative[i] != 0 { // -0 is no price: it goes raw
			negative[i] = -negative[i]
		}
	}
	tenth := 0.1 // a variable: the constant 0.1 + 0.2 is exactly 0.3
	oneRaw := func(x float64) []float64 {
		col := decimals(fixed(2))
		col[n/2] = x
		return col
	}

	tests := []struct {
		name      string
		col       []float64
		wantScale int // -1: raw
	}{
		{"integers", decimals(fixed(0)), 0},
		{"2 places", decimals(fixed(2)), 2},
		{"4 places", decimals(fixed(4)), 4},
		{"6 places", decimals(fixed(6)), 6},
		{"0 to 6 places", decimals(mixed), 6},
		{"volumes to 1e12", volumes, 0},
		{"random bits", randomBits, -1},
		{"negative", negative, 6},
		{"one 0.1+0.2", oneRaw(tenth + 0.2), -1},
		{"one 10 places", oneRaw(1.0000000001), -1},
		{"one 2^53", oneRaw(1 << 53), -1},
		{"one -0", oneRaw(math.Copysign(0, -1)), -1},
		{"one NaN", oneRaw(math.NaN()), -1},
		{"one +Inf", oneRaw(math.Inf(1)), -1},
		{"one -Inf", oneRaw(math.Inf(-1)), -1},
		{"one max float", oneRaw(math.MaxFloat64), -1},
		{"one tiny", oneRaw(5e-324), -1},
		{"9 places", []float64{0.123456789, 1.000000001, 9007199.254740991}, 9},
		{"extremes of 2^53", []float64{1<<53 - 1, -(1<<53 - 1), 0, 1<<53 - 1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := columnScale(tt.col); got != tt.wantScale {
				t.Errorf("columnScale = %d, want %d", got, tt.wantScale)
			}
			m := len(tt.col)
			c := ohlcv.Series{Dates: randomDates(r, calendar.NewDate(1950+r.IntN(60), 1, 1), m),
				Open: tt.col, High: decimals(fixed(2))[:m], Low: tt.col, Close: volumes[:m], Volume: tt.col}
			got, err := decodeColumns(encodeColumns(c))
			if err != nil {
				t.Fatal(err)
			}
			mustEqualColumns(t, got, c)
		})
	}

	t.Run("n=0", func(t *testing.T) {
		b := encodeColumns(ohlcv.Series{})
		got, err := decodeColumns(b)
		if err != nil || got.Len() != 0 || len(got.Open) != 0 || len(got.Volume) != 0 {
			t.Errorf("decodeColumns(%v) = %+v, %v", b, got, err)
		}
	})
	t.Run("n=1", func(t *testing.T) {
		for _, d := range []calendar.Date{calendar.NewDate(1969, 12, 31), epoch, calendar.NewDate(2024, 2, 29), calendar.NewDate(1, 1, 1)} {
			c := ohlcv.Series{Dates: []calendar.Date{d}, Open: []float64{187.15}, High: []float64{math.NaN()},
				Low: []float64{-3}, Close: []float64{0}, Volume: []float64{82488700}}
			got, err := decodeColumns(encodeColumns(c))
			if err != nil {
				t.Fatal(err)
			}
			mustEqualColumns(t, got, c)
		}
	})
}

// TestColumnsSize encodes ten years of a two-decimal price random walk and
// whole volumes: far smaller than the 44 bytes a day of format 1.
func TestColumnsSize(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	const n = 2520
	c := ohlcv.Series{Dates: make([]calendar.Date, 0, n)}
	for d := calendar.NewDate(2015, 1, 2); len(c.Dates) < n; d = d.AddDays(1) {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			c.Dates = append(c.Dates, d)
		}
	}
	cents := int64(10000)
	for range n {
		o := cents
		cents = max(cents+int64(r.IntN(401)-200), 100)
		hi, lo := max(o, cents)+int64(r.IntN(100)), min(o, cents)-int64(r.IntN(100))
		for _, p := range []struct {
			col *[]float64
			v   int64
		}{{&c.Open, o}, {&c.High, hi}, {&c.Low, max(lo, 1)}, {&c.Close, cents}} {
			x, err := strconv.ParseFloat(strconv.FormatInt(p.v/100, 10)+"."+fmt.Sprintf("%02d", p.v%100), 64)
			if err != nil {
				t.Fatal(err)
			}
			*p.col = append(*p.col, x)
		}
		c.Volume = append(c.Volume, float64(1e6+r.IntN(5e7)))
	}
	b := encodeColumns(c)
	old := len(encodeColumnsV1(c))
	t.Logf("%d days: %d bytes (%.1f a day), format 1 %d bytes", n, len(b), float64(len(b))/n, old)
	if len(b) > old/3 {
		t.Errorf("%d bytes, want at most a third of format 1's %d", len(b), old)
	}
	got, err := decodeColumns(b)
	if err != nil {
		t.Fatal(err)
	}
	mustEqualColumns(t, got, c)
}

func TestDecodeColumnsRejects(t *testing.T) {
	t.Parallel()
	c := ohlcv.Series{Dates: []calendar.Date{calendar.NewDate(1969, 12, 31), calendar.NewDate(2100, 12, 31)},
		Open: []float64{1.5, -2}, High: []float64{3, 4}, Low: []float64{0.1, 0.2}, Close: []float64{5, math.NaN()}, Volume: []float64{0, 1e12}}
	good := encodeColumns(c)
	if _, err := decodeColumns(good); err != nil {
		t.Fatalf("the valid encoding: %v", err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	withSize := func(b []byte) []byte {
		binary.LittleEndian.PutUint32(b[5:], uint32(len(b)))
		return b
	}
	// The header of n=1 with room for exactly one day and five one-byte columns.
	header := func(n uint32, rest ...byte) []byte {
		b := binary.LittleEndian.AppendUint32([]byte{columnsFormat}, n)
		return withSize(append(binary.LittleEndian.AppendUint32(b, 0), rest...))
	}
	tests := []struct {
		name string
		in   []byte
	}{
		{"nil", nil},
		{"format 1", encodeColumnsV1(c)},
		{"format 2 header only", []byte{2, 0, 0, 0, 0}},
		{"unknown format", edit(func(b []byte) []byte { b[0] = 3; return b })},
		{"truncated", good[:20]},
		{"truncated, size fixed", edit(func(b []byte) []byte { return withSize(b[:len(b)-1]) })},
		{"trailing byte", append(append([]byte(nil), good...), 0)},
		{"trailing byte, size fixed", edit(func(b []byte) []byte { return withSize(append(b, 0)) })},
		{"wrong size", edit(func(b []byte) []byte { b[5]++; return b })},
		{"huge n", edit(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[1:], math.MaxUint32); return b })},
		{"n one too many", edit(func(b []byte) []byte { b[1]++; return b })},
		{"no columns", header(0)},
		{"four columns", header(0, 0, 0, 0, 0)},
		{"unknown scale", header(0, 0, 0, 10, 0, 0)},
		{"raw column short", header(1, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)},
		{"overlong varint", header(1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)},
		{"first date out of range", header(1, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)},
		{"date step out of range", header(2, 0xfc, 0xff, 0xff, 0xff, 0x0f, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := decodeColumns(tt.in); err == nil {
				t.Errorf("decodeColumns(%v) accepted: %+v", tt.in, got)
			}
		})
	}
}

// TestNextDate checks the month-end walk against [calendar.Date.AddDays]
// for every day of 1900 to 2100 and every step of 0 to 70 days.
func TestNextDate(t *testing.T) {
	t.Parallel()
	for d := calendar.NewDate(1900, 1, 1); d.Year <= 2100; d = d.AddDays(1) {
		for n := 0; n <= 70; n++ {
			if got, want := nextDate(d, n), d.AddDays(n); got != want {
				t.Fatalf("nextDate(%v, %d) = %v, want %v", d, n, got, want)
			}
		}
	}
	for _, d := range []calendar.Date{calendar.NewDate(-1, 12, 31), calendar.NewDate(9999, 12, 1), calendar.NewDate(1600, 2, 28)} {
		for _, n := range []int{0, 1, 29, 31, 62, 63, 1000, 400 * 365} {
			if got, want := nextDate(d, n), d.AddDays(n); got != want {
				t.Errorf("nextDate(%v, %d) = %v, want %v", d, n, got, want)
			}
		}
	}
}

// BenchmarkDecodeColumns decodes ten years of one asset's columns.
func BenchmarkDecodeColumns(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	const n = 2520
	c := ohlcv.Series{Dates: randomDates(r, calendar.NewDate(2015, 1, 2), n)}
	for _, col := range []*[]float64{&c.Open, &c.High, &c.Low, &c.Close} {
		*col = make([]float64, n)
		for i := range *col {
			(*col)[i] = randomDecimal(r, 2)
		}
	}
	c.Volume = make([]float64, n)
	for i := range c.Volume {
		c.Volume[i] = float64(r.IntN(1e8))
	}
	data := encodeColumns(c)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := decodeColumns(data); err != nil {
			b.Fatal(err)
		}
	}
}
