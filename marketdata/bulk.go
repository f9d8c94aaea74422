package marketdata

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// BulkOptions configures [ImportPricesBulk]. The zero value gives the
// defaults.
type BulkOptions struct {
	// Workers is the number of goroutines that read, decompress and parse
	// the files. Default: runtime.GOMAXPROCS(0).
	Workers int
	// NewAssets gives the Type, Currency and Exchange of the assets the
	// import creates for unknown symbols (see [PriceImport]; its Symbol and
	// Name are ignored: a new asset is named after its symbol).
	NewAssets PriceImport
	// Progress, when set, is called by the writing goroutine after each
	// batch it writes. It must return quickly.
	Progress func(BulkProgress)
	// CommitRows is the number of rows after which the import commits, at
	// the end of a file. Default 2,000,000. Whatever the value, a file is
	// imported whole or not at all: it is written inside a savepoint, or
	// (SQLite) opens its transaction, which is rolled back if it fails.
	CommitRows int
}

// BulkProgress tells how far an [ImportPricesBulk] run has come.
type BulkProgress struct {
	// Files is the number of input files; FilesDone of them are finished
	// (imported or failed).
	Files, FilesDone int
	// Rows is the number of rows written so far.
	Rows int64
	// Bytes of TotalBytes input bytes are read (on disk: compressed bytes
	// for a .gz file).
	Bytes, TotalBytes int64
}

// BulkResult summarises an [ImportPricesBulk] run.
type BulkResult struct {
	// Files is the number of files imported.
	Files int
	// Rows is the number of rows imported (inserted, updated or found
	// unchanged).
	Rows int64
	// Assets is the number of assets that rows were imported for.
	Assets int
	// Created lists the symbols of the assets the import created, in the
	// order it created them.
	Created []string
	// Changed is the number of assets whose stored prices changed (their
	// price version went up).
	Changed int
	// From and To are the first and last dates imported.
	From, To calendar.Date
	// Failed lists the files not imported, in input order, each with the
	// reason (for a bad row, a *[ParseError] naming its line).
	Failed []*FileError
	// NonTradingRows is the number of rows imported that are dated on a
	// day their asset's exchange holds no session by its calendar
	// (weekends and holidays, as [ImportResult.NonTradingDays]), and
	// NonTradingDays the earliest of them, at most 10, in date order.
	// They are stored all the same; such dates are often a sign of a
	// wrong exchange or date column.
	NonTradingRows int
	NonTradingDays []NonTradingDay
	// NoVolumeFiles is the number of files imported that have no volume
	// column (FX and crypto files often have none): their rows' volume is
	// 0.
	NoVolumeFiles int
}

// NonTradingDay is a row of a bulk import dated on a day its asset's
// exchange does not trade.
type NonTradingDay struct {
	// Symbol is the asset's symbol.
	Symbol string
	// Exchange is the asset's exchange, whose calendar tells why.
	Exchange Exchange
	// Date is the row's date.
	Date calendar.Date
}

// FileError is the failure of one input file of [ImportPricesBulk]: none
// of its rows is imported.
type FileError struct {
	// File is the path of the file.
	File string
	// Err is the reason, often a *[ParseError] naming the line.
	Err error
}

// Error implements error: "data/ACME.csv: line 7: high 10.5 is below open 11 or close 11".
func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *FileError) Unwrap() error { return e.Err }

// bulkFile is one input file of a bulk import.
type bulkFile struct {
	path string
	size int64
	// symbol is the symbol the file name gives (SYMBOL.csv[.gz]), used when
	// the file has no symbol or ticker column.
	symbol string
	// stop asks the reader to stop: the file failed.
	stop atomic.Bool
	// layout is the file's header, and line the number of the next line
	// to read: both are the reader's.
	layout *bulkLayout
	line   int
}

// BulkFiles returns the files [ImportPricesBulk] reads for path: path
// itself when it is a file, or every *.csv and *.csv.gz file (any case)
// under the directory path, walked in lexical order, hidden files and
// directories skipped. The error wraps [tradekit.ErrInvalid] when a
// directory holds no such file.
func BulkFiles(path string) ([]string, error) {
	files, err := bulkFiles(path)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.path
	}
	return out, nil
}

func bulkFiles(path string) ([]*bulkFile, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("marketdata: %w", err)
	}
	if !info.IsDir() {
		return []*bulkFile{{path: path, size: info.Size(), symbol: fileSymbol(path)}}, nil
	}
	var out []*bulkFile
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != path && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || fileSymbol(p) == "" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, &bulkFile{path: p, size: info.Size(), symbol: fileSymbol(p)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("marketdata: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("marketdata: %s: no .csv or .csv.gz file in the directory: %w", path, tradekit.ErrInvalid)
	}
	return out, nil
}

// fileSymbol returns the symbol a file name gives, SYMBOL of SYMBOL.csv or
// SYMBOL.csv.gz (any case; upper-cased), or "" for another name.
func fileSymbol(path string) string {
	base := filepath.Base(path)
	lower := strings.ToLower(base)
	lower = strings.TrimSuffix(lower, ".gz")
	if !strings.HasSuffix(lower, ".csv") {
		return ""
	}
	return NormalizeSymbol(base[:len(lower)-len(".csv")])
}

// bulkLayout is where the columns of a price file are.
type bulkLayout struct {
	ncols                          int
	symbol, date, windowStart      int // -1 when absent
	open, high, low, close, volume int
	fileSymbol                     string // when symbol < 0
	fileSymbolID                   uuid.UUID
	polygon                        bool
}

// parseHeader reads the header line of a price file. A file has either a
// symbol (or ticker) column or a symbol in its name, and either a date
// column or, as Polygon's flat files, a window_start column (Unix
// nanoseconds; the bar's date is the UTC date of the instant).
func parseHeader(line []byte, file *bulkFile) (*bulkLayout, error) {
	line = bytes.TrimPrefix(line, []byte("\ufeff"))
	cr := csv.NewReader(bytes.NewReader(line))
	header, err := cr.Read()
	if err != nil {
		return nil, &ParseError{Line: 1, Msg: "empty file: want a header row"}
	}
	if err := delimiterError(header); err != nil {
		return nil, err
	}
	l := &bulkLayout{ncols: len(header), symbol: -1, date: -1, windowStart: -1,
		open: -1, high: -1, low: -1, close: -1, volume: -1}
	for i, h := range header {
		var dst *int
		switch columnKey(h) {
		case "symbol", "ticker":
			dst = &l.symbol
		case "date":
			dst = &l.date
		case "windowstart":
			dst = &l.windowStart
		case "open":
			dst = &l.open
		case "high":
			dst = &l.high
		case "low":
			dst = &l.low
		case "close":
			dst = &l.close
		case "volume":
			dst = &l.volume
		default:
			continue
		}
		if *dst >= 0 {
			return nil, &ParseError{Line: 1, Msg: fmt.Sprintf("header repeats the %q column", h)}
		}
		*dst = i
	}
	for _, c := range []struct {
		name string
		i    int
	}{{"open", l.open}, {"high", l.high}, {"low", l.low}, {"close", l.close}} {
		if c.i < 0 {
			return nil, &ParseError{Line: 1, Msg: fmt.Sprintf("header has no %q column (columns: %s)", c.name, strings.Join(header, ", "))}
		}
	}
	switch {
	case l.date >= 0:
		l.windowStart = -1
	case l.windowStart >= 0:
		l.polygon = true
	default:
		return nil, &ParseError{Line: 1, Msg: fmt.Sprintf("header has no \"date\" (or \"window_start\") column (columns: %s)", strings.Join(header, ", "))}
	}
	if l.symbol < 0 {
		if file.symbol == "" {
			return nil, &ParseError{Line: 1, Msg: "header has no \"symbol\" or \"ticker\" column, and the file name (SYMBOL.csv) gives no symbol"}
		}
		l.fileSymbol = file.symbol
	}
	return l, nil
}

// zeroVolume is the volume of the rows of a file without a volume column.
var zeroVolume = []byte("0")

// bulkBatch is the parsed form of a chunk of a file, ready to write.
type bulkBatch struct {
	// data is the rows as COPY text (PostgreSQL), or (SQLite) the text of
	// each row's date, open, high, low and close back to back, the fields
	// ending at the offsets ends (five per row), with the volumes in vols.
	data []byte
	ends []uint32
	vols []int64
	rows int
	// symbols are the batch's distinct symbols, ids their asset ids
	// (and on PostgreSQL idText the ids as text).
	symbols []string
	ids     []uuid.UUID
	idText  [][36]byte
	// keys identify each row, for the check that a file repeats no asset
	// and date; on SQLite they also give each row's asset.
	keys     []rowKey
	from, to calendar.Date
	err      error
}

// rowKey is a row's symbol (an index into the batch's symbols), its day
// (days since dayEpoch) and its line.
type rowKey struct {
	sym, day, line int32
}

// dayEpoch is the origin of rowKey.day.
var dayEpoch = calendar.Date{Year: 1900, Month: time.January, Day: 1}

// bulkParser parses chunks of price files: safe for concurrent use.
type bulkParser struct {
	pg bool
	// known maps the symbols of the assets that exist to their ids.
	known map[string]uuid.UUID
}

// parseChunk parses the complete lines of data, the first of them line
// first of l's file.
func (p *bulkParser) parseChunk(l *bulkLayout, data []byte, first int) *bulkBatch {
	b := &bulkBatch{data: make([]byte, 0, len(data)*3/2+64)}
	if !p.pg {
		// About 40 bytes a line in the usual files: room for most chunks.
		b.ends = make([]uint32, 0, len(data)/40*5)
		b.vols = make([]int64, 0, len(data)/40)
	}
	symIdx := map[string]int32{}
	fields := make([][]byte, 0, l.ncols)
	var num [4]fastDec
	line := first - 1
	for len(data) > 0 {
		line++
		var raw []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			raw, data = data, nil
		}
		raw = bytes.TrimSuffix(raw, []byte{'\r'})
		if len(bytes.TrimSpace(raw)) == 0 {
			continue // a blank line
		}
		fields = fields[:0]
		if bytes.IndexByte(raw, '"') >= 0 {
			rec, err := csv.NewReader(bytes.NewReader(raw)).Read()
			if err != nil {
				b.err = &ParseError{Line: line, Msg: "bad quoting (a quoted field cannot hold a line break here): " + err.Error()}
				return b
			}
			for _, f := range rec {
				fields = append(fields, []byte(f))
			}
		} else {
			for {
				i := bytes.IndexByte(raw, ',')
				if i < 0 {
					fields = append(fields, raw)
					break
				}
				fields = append(fields, raw[:i])
				raw = raw[i+1:]
			}
		}
		if len(fields) != l.ncols {
			b.err = &ParseError{Line: line, Msg: fmt.Sprintf("%d fields, the header has %d", len(fields), l.ncols)}
			return b
		}
		perr := func(format string, args ...any) *bulkBatch {
			b.err = &ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
			return b
		}

		// Symbol.
		sym := l.fileSymbol
		var si int32
		if l.symbol >= 0 {
			s := bytes.TrimSpace(fields[l.symbol])
			if len(s) == 0 {
				return perr("empty symbol")
			}
			var ok bool
			if si, ok = symIdx[string(s)]; !ok {
				sym = NormalizeSymbol(string(s))
				si = p.addSymbol(b, symIdx, string(s), sym)
			}
		} else if len(b.symbols) == 0 {
			si = p.addSymbol(b, symIdx, sym, sym)
		}

		// Date.
		var d calendar.Date
		if l.date >= 0 {
			s := bytes.TrimSpace(fields[l.date])
			var ok bool
			if d, ok = fastDate(s); !ok {
				if isDateShaped(string(s)) {
					return perr("date %q: no such date", s)
				}
				return perr("date %q: want YYYY-MM-DD", s)
			}
		} else {
			s := bytes.TrimSpace(fields[l.windowStart])
			ns, err := strconv.ParseInt(string(s), 10, 64)
			if err != nil {
				return perr("window_start %q: want Unix nanoseconds", s)
			}
			d = calendar.DateOf(time.Unix(0, ns).UTC())
		}

		// Prices and volume.
		fast := true
		for i, c := range [4]int{l.open, l.high, l.low, l.close} {
			f := bytes.TrimSpace(fields[c])
			if !num[i].parse(f) {
				if _, err := decimal.NewFromString(string(f)); err != nil || len(f) > 60 {
					return perr("%s %q: want a decimal number", [4]string{"open", "high", "low", "close"}[i], f)
				}
				fast = false
			}
		}
		var vf []byte
		if l.volume >= 0 { // else no volume column (FX, crypto): 0
			vf = bytes.TrimSpace(fields[l.volume])
		} else {
			vf = zeroVolume
		}
		vol, err := strconv.ParseInt(string(vf), 10, 64)
		if err != nil {
			dv, derr := decimal.NewFromString(string(vf))
			if derr != nil || !dv.IsInteger() || dv.Cmp(decimal.NewFromInt(1<<62)) > 0 {
				return perr("volume %q: want a whole number", vf)
			}
			vol = dv.IntPart()
		}
		o, h, lo, c := num[0], num[1], num[2], num[3]
		if !fast || !(o.f > 0 && h.f > 0 && lo.f > 0 && c.f > 0 && h.f >= o.f && h.f >= c.f && lo.f <= o.f && lo.f <= c.f) || vol < 0 {
			// The exact check, with decimals: rare (a bad row, or numbers
			// beyond fastDec).
			pr := Price{Date: d, Volume: vol}
			for i, dst := range [4]*decimal.Decimal{&pr.Open, &pr.High, &pr.Low, &pr.Close} {
				*dst = decimal.RequireFromString(string(bytes.TrimSpace(fields[[4]int{l.open, l.high, l.low, l.close}[i]])))
			}
			if err := pr.Validate(); err != nil {
				return perr("%s", trimPrefix(err))
			}
			for i, dst := range [4]*decimal.Decimal{&pr.Open, &pr.High, &pr.Low, &pr.Close} {
				num[i].text = append(num[i].text[:0], dst.String()...)
			}
		}

		// The row, as the database reads it.
		if b.rows == 0 || d.Before(b.from) {
			b.from = d
		}
		if d.After(b.to) {
			b.to = d
		}
		b.keys = append(b.keys, rowKey{sym: si, day: int32(d.Sub(dayEpoch)), line: int32(line)})
		if p.pg {
			// COPY's text format, which the server parses as psql's
			// \copy has it do.
			b.data = append(b.data, b.idText[si][:]...)
			b.data = append(b.data, '\t')
			b.data, _ = d.AppendText(b.data)
			for i := range num {
				b.data = append(b.data, '\t')
				b.data = append(b.data, num[i].text...)
			}
			b.data = append(b.data, '\t')
			b.data = strconv.AppendInt(b.data, vol, 10)
			b.data = append(b.data, '\n')
		} else {
			b.data, _ = d.AppendText(b.data)
			b.ends = append(b.ends, uint32(len(b.data)))
			for i := range num {
				b.data = append(b.data, num[i].text...)
				b.ends = append(b.ends, uint32(len(b.data)))
			}
			b.vols = append(b.vols, vol)
		}
		b.rows++
	}
	return b
}

// addSymbol adds sym (as written: raw) to the batch and returns its index.
func (p *bulkParser) addSymbol(b *bulkBatch, idx map[string]int32, raw, sym string) int32 {
	if i, ok := idx[sym]; ok {
		idx[raw] = i
		return i
	}
	id, ok := p.known[sym]
	if !ok {
		id = AssetID(sym)
	}
	i := int32(len(b.symbols))
	b.symbols = append(b.symbols, sym)
	b.ids = append(b.ids, id)
	if p.pg {
		var text [36]byte
		copy(text[:], id.String())
		b.idText = append(b.idText, text)
	}
	idx[raw], idx[sym] = i, i
	return i
}

// fastDate parses YYYY-MM-DD, reporting false for anything else or a day
// that does not exist.
func fastDate(s []byte) (calendar.Date, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return calendar.Date{}, false
	}
	n := 0
	for i, c := range s {
		if i == 4 || i == 7 {
			continue
		}
		if c < '0' || c > '9' {
			return calendar.Date{}, false
		}
		n = n*10 + int(c-'0')
	}
	d := calendar.Date{Year: n / 10000, Month: time.Month(n / 100 % 100), Day: n % 100}
	return d, d.IsValid() && d.Year > 0
}

// fastDec is a plain decimal number ("187.149994") of at most 15
// significant digits: its canonical text, as decimal.Decimal.String gives
// it (no leading or trailing zeros), and its float64, which orders such
// numbers exactly.
type fastDec struct {
	text []byte
	f    float64
}

// parse reads b into d and reports whether b is a plain decimal that
// fastDec can hold (digits with at most one dot, no sign); for anything
// else the caller uses package decimal.
func (d *fastDec) parse(b []byte) bool {
	if bytes.IndexByte(b, '.') >= 0 {
		b = bytes.TrimRight(b, "0")
	}
	var m int64
	sig, frac, dot := 0, 0, -1
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if m == 0 && c == '0' {
				if dot >= 0 {
					frac++
				}
				continue
			}
			m = m*10 + int64(c-'0')
			sig++
			if dot >= 0 {
				frac++
			}
		case c == '.' && dot < 0:
			dot = i
		default:
			return false
		}
	}
	if sig > 15 || frac > 22 || len(b) == 0 || (dot >= 0 && len(b) == 1) {
		return false
	}
	for frac > 0 && m%10 == 0 && m != 0 {
		m /= 10
		frac--
	}
	if m == 0 {
		frac = 0
	}
	d.f = float64(m)
	if frac > 0 {
		d.f /= fastPow10[frac]
	}
	// The text: m with a dot frac digits from the right.
	var digits [24]byte
	s := strconv.AppendInt(digits[:0], m, 10)
	d.text = d.text[:0]
	if frac == 0 {
		d.text = append(d.text, s...)
		return true
	}
	if len(s) <= frac {
		d.text = append(d.text, "0."...)
		for range frac - len(s) {
			d.text = append(d.text, '0')
		}
		d.text = append(d.text, s...)
		return true
	}
	d.text = append(d.text, s[:len(s)-frac]...)
	d.text = append(d.text, '.')
	d.text = append(d.text, s[len(s)-frac:]...)
	return true
}

// fastPow10 holds the powers of ten that fastDec divides by: exact float64s,
// so m / 10^k is the float64 nearest the decimal (correctly rounded).
var fastPow10 = func() []float64 {
	out := make([]float64, 61)
	out[0] = 1
	for i := 1; i < len(out); i++ {
		out[i] = out[i-1] * 10
	}
	return out
}()

// bulkChunkSize is the size of the pieces a file is cut into for parsing.
const bulkChunkSize = 1 << 20

// readFile reads f in chunks of whole lines, has them parsed by jobs, and
// sends each chunk's future batch on q in file order; it closes q at the
// end. read counts the bytes read from disk.
func readFile(ctx context.Context, f *bulkFile, p *bulkParser, jobs chan<- func(), q chan<- chan *bulkBatch, read *atomic.Int64) {
	defer close(q)
	fail := func(err error) {
		c := make(chan *bulkBatch, 1)
		c <- &bulkBatch{err: err}
		select {
		case q <- c:
		case <-ctx.Done():
		}
	}
	fh, err := os.Open(f.path)
	if err != nil {
		fail(err)
		return
	}
	defer fh.Close()
	br := bufio.NewReaderSize(&countingReader{r: fh, n: read}, 256<<10)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			fail(fmt.Errorf("gzip: %w", err))
			return
		}
		defer zr.Close()
		r = bufio.NewReaderSize(zr, 256<<10)
	}
	var header []byte
	var carry []byte
	for {
		buf := make([]byte, len(carry)+bulkChunkSize)
		copy(buf, carry)
		n, err := io.ReadFull(r, buf[len(carry):])
		data := buf[:len(carry)+n]
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			fail(err)
			return
		}
		eof := err != nil
		if header == nil {
			i := bytes.IndexByte(data, '\n')
			if i < 0 && !eof {
				fail(&ParseError{Line: 1, Msg: "header line longer than 1 MiB"})
				return
			}
			if i < 0 {
				i = len(data)
			}
			header = data[:i]
			data = data[min(i+1, len(data)):]
			if len(bytes.TrimSpace(header)) == 0 {
				fail(&ParseError{Line: 1, Msg: "empty file: want a header row"})
				return
			}
		}
		if !eof {
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 {
				fail(&ParseError{Msg: "a line longer than 1 MiB"})
				return
			}
			carry = append(carry[:0:0], data[i+1:]...)
			data = data[:i+1]
		}
		if f.layout == nil {
			l, err := parseHeader(header, f)
			if err != nil {
				fail(err)
				return
			}
			f.layout = l
			f.line = 2
		}
		if len(data) > 0 {
			c := make(chan *bulkBatch, 1)
			l, first := f.layout, f.line
			chunk := data
			select {
			case jobs <- func() { c <- p.parseChunk(l, chunk, first) }:
			case <-ctx.Done():
				return
			}
			select {
			case q <- c:
			case <-ctx.Done():
				return
			}
			f.line += bytes.Count(data, []byte{'\n'})
		}
		if eof || f.stop.Load() {
			return
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// daySet is a set of days (rowKey.day), a bitmap over the span seen.
type daySet struct {
	base  int32 // the day of bit 0 of words[0], a multiple of 64
	words []uint64
}

// add adds day and reports whether it was new.
func (s *daySet) add(day int32) bool {
	w := day >> 6
	if s.words == nil {
		s.base = w
	}
	switch {
	case w < s.base:
		grow := int(s.base - w)
		s.words = append(make([]uint64, grow, grow+len(s.words)), s.words...)
		s.base = w
	case int(w-s.base) >= len(s.words):
		s.words = append(s.words, make([]uint64, int(w-s.base)-len(s.words)+1)...)
	}
	i := w - s.base
	bit := uint64(1) << (day & 63)
	if s.words[i]&bit != 0 {
		return false
	}
	s.words[i] |= bit
	return true
}

// union adds the days of o to s.
func (s *daySet) union(o *daySet) {
	o.each(func(day int32) { s.add(day) })
}

// each calls fn with every day of s, in ascending order.
func (s *daySet) each(fn func(day int32)) {
	for i, w := range s.words {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			fn((s.base+int32(i))<<6 + int32(b))
			w &= w - 1
		}
	}
}

// sortedSymbols returns the keys of m, sorted.
func sortedSymbols[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
