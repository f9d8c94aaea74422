package bulk

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/tradekit/tradekit/marketdata"
)

// chunkSize is the size of the pieces a file is cut into for parsing.
const chunkSize = 1 << 20

// readFile reads f in chunks of whole lines, has them parsed by jobs, and
// sends each chunk's future batch on q in file order; it closes q at the
// end. read counts the bytes read from disk.
func readFile(ctx context.Context, f *sourceFile, p *parser, jobs chan<- func(), q chan<- chan *batch, read *atomic.Int64) {
	defer close(q)
	fail := func(err error) {
		c := make(chan *batch, 1)
		c <- &batch{err: err}
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
		buf := make([]byte, len(carry)+chunkSize)
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
				fail(&marketdata.ParseError{Line: 1, Msg: "header line longer than 1 MiB"})
				return
			}
			if i < 0 {
				i = len(data)
			}
			header = data[:i]
			data = data[min(i+1, len(data)):]
			if len(bytes.TrimSpace(header)) == 0 {
				fail(&marketdata.ParseError{Line: 1, Msg: "empty file: want a header row"})
				return
			}
		}
		if !eof {
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 {
				fail(&marketdata.ParseError{Msg: "a line longer than 1 MiB"})
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
			c := make(chan *batch, 1)
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
