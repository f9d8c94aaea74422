package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/bulk"
)

// importPricesBulk runs `tradekit import prices --file PATH` without
// --symbol: every file under PATH in one run (bulk.Import),
// then one incremental profile build for the assets whose prices changed.
func (e *env) importPricesBulk(ctx context.Context, dsn, path string, workers int, newAssets marketdata.PriceImport) error {
	start := time.Now()
	db, err := e.open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	opt := bulk.Options{Workers: workers, NewAssets: newAssets}
	bar := newProgressBar(e.stdout, start)
	if bar != nil {
		opt.Progress = bar.update
	}
	res, err := bulk.Import(ctx, db, path, opt)
	bar.clear()
	if err != nil && len(res.Failed) == 0 {
		return fmt.Errorf("import prices: %s: %w", path, err)
	}
	if res.Files == 0 && len(res.Failed) == 1 {
		// One file, not imported: its error, once, as with --symbol.
		return fail("import prices: "+res.Failed[0].File+": nothing imported", res.Failed[0].Err)
	}
	for _, f := range res.Failed {
		fmt.Fprintf(e.stderr, "tradekit: %s: nothing imported from this file: %s\n", f.File, oneLine(userMessage(f.Err)))
	}
	if res.Files == 0 {
		return fmt.Errorf("import prices: %s: none of the %d files imported (listed above)", path, len(res.Failed))
	}
	elapsed := time.Since(start)
	newAssetsNote := ""
	if n := len(res.Created); n > 0 {
		newAssetsNote = fmt.Sprintf(" (%d new)", n)
	}
	span := ""
	if res.Rows > 0 {
		span = fmt.Sprintf(" from %s to %s", res.From, res.To)
	}
	fmt.Fprintf(e.stdout, "imported %s for %s%s from %s%s in %s (%s rows/s)\n",
		plural(int(res.Rows), "row", "rows"), plural(res.Assets, "asset", "assets"), newAssetsNote,
		plural(res.Files, "file", "files"), span, elapsed.Round(time.Millisecond),
		humanRate(float64(res.Rows)/elapsed.Seconds()))
	if res.NoVolumeFiles > 0 {
		fmt.Fprintf(e.stderr, "tradekit: note: %s no volume column: %s rows are imported with volume 0\n",
			plural(res.NoVolumeFiles, "file has", "files have"), map[bool]string{true: "its", false: "their"}[res.NoVolumeFiles == 1])
	}
	e.warnNonTradingDaysBulk(res)
	if res.Changed > 0 {
		created := make(map[string]bool, len(res.Created))
		for _, s := range res.Created {
			created[s] = true
		}
		e.buildProfilesAfterImport(ctx, db, func(sym string) bool { return created[sym] })
	}
	if len(res.Failed) > 0 {
		return fmt.Errorf("import prices: %d of %d files not imported (listed above)", len(res.Failed), len(res.Failed)+res.Files)
	}
	return nil
}

// humanRate prints a rate with a k or M suffix.
func humanRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.0fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}

// progressBar draws one self-rewriting line on a terminal: the share of
// the input read, rows written, rows/s and the time left.
type progressBar struct {
	w     io.Writer
	start time.Time
	last  time.Time
	drawn bool
}

// newProgressBar returns a bar on w when w is a terminal, and nil (which
// draws nothing) otherwise, so that logs and pipes get only the summary.
func newProgressBar(w io.Writer, start time.Time) *progressBar {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &progressBar{w: w, start: start}
}

// update redraws the bar at most ten times a second.
func (b *progressBar) update(p bulk.Progress) {
	if !b.due() {
		return
	}
	frac := 0.0
	if p.TotalBytes > 0 {
		frac = min(1, float64(p.Bytes)/float64(p.TotalBytes))
	}
	b.draw(frac, p.Rows, fmt.Sprintf("%d/%d files  %d rows", p.FilesDone, p.Files, p.Rows))
}

// due reports whether a tenth of a second has passed since the bar was
// last drawn, and if so counts it as drawn now.
func (b *progressBar) due() bool {
	now := time.Now()
	if now.Sub(b.last) < 100*time.Millisecond {
		return false
	}
	b.last = now
	return true
}

// draw draws the bar: the share done frac, what detail says, and the
// rate and the time left from rows written so far.
func (b *progressBar) draw(frac float64, rows int64, detail string) {
	elapsed := time.Since(b.start)
	eta := "?"
	if frac > 0.01 {
		eta = (time.Duration(float64(elapsed)/frac) - elapsed).Round(time.Second).String()
	}
	const width = 30
	n := int(frac * width)
	fmt.Fprintf(b.w, "\r[%s%s] %3.0f%%  %s  %s rows/s  ETA %s \x1b[K",
		strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, detail,
		humanRate(float64(rows)/elapsed.Seconds()), eta)
	b.drawn = true
}

// clear erases the bar, if drawn.
func (b *progressBar) clear() {
	if b != nil && b.drawn {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
}

// startCPUProfile starts a CPU profile of the process into the file path,
// and returns the function that stops it and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
