package main

import (
	"image/color"
	"os"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tradekit/tradekit/backtest"
)

var (
	strategyColor = color.RGBA{R: 0x1f, G: 0x6f, B: 0xeb, A: 0xff}
	holdColor     = color.RGBA{R: 0x8c, G: 0x95, B: 0x9f, A: 0xff}
)

// writeChart writes a PNG of the equity curves of the strategy and the
// benchmark, above the strategy's drawdown.
func writeChart(path string, res, hold *backtest.Result) error {
	equity := plot.New()
	equity.Title.Text = "Equity"
	equity.Y.Label.Text = "equity"
	drawdown := plot.New()
	drawdown.Title.Text = "Drawdown of the strategy"
	drawdown.Y.Label.Text = "% below the high"
	for _, p := range []*plot.Plot{equity, drawdown} {
		p.X.Tick.Marker = yearTicks{}
		p.Add(plotter.NewGrid())
	}
	for _, c := range []struct {
		name string
		r    *backtest.Result
		col  color.Color
	}{{"buy & hold", hold, holdColor}, {"strategy", res, strategyColor}} {
		l, err := plotter.NewLine(points(c.r, c.r.Equity))
		if err != nil {
			return err
		}
		l.Color = c.col
		l.Width = vg.Points(1.2)
		equity.Add(l)
		equity.Legend.Add(c.name, l)
	}
	equity.Legend.Top, equity.Legend.Left = true, true

	dd := make([]float64, len(res.Equity))
	peak := res.Equity[0]
	for i, e := range res.Equity {
		peak = max(peak, e)
		dd[i] = 100 * (e/peak - 1)
	}
	under := points(res, dd) // the area between 0 and the curve
	first, last := under[0].X, under[len(under)-1].X
	area, err := plotter.NewPolygon(append(under, plotter.XY{X: last}, plotter.XY{X: first}))
	if err != nil {
		return err
	}
	area.Color, area.LineStyle.Width = color.NRGBA{R: 0x1f, G: 0x6f, B: 0xeb, A: 0x50}, 0
	drawdown.Add(area)
	equity.Y.Tick.Marker = wholeTicks{}

	img := vgimg.New(vg.Points(900), vg.Points(600))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(16), PadY: vg.Points(16)}
	plots := [][]*plot.Plot{{equity}, {drawdown}}
	canvases := plot.Align(plots, tiles, dc)
	equity.Draw(canvases[0][0])
	drawdown.Draw(canvases[1][0])

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// points pairs a result's days (as Unix seconds) with the values ys.
func points(r *backtest.Result, ys []float64) plotter.XYs {
	xy := make(plotter.XYs, len(ys))
	for i, y := range ys {
		xy[i].X = float64(r.Dates[i].Time(time.UTC).Unix())
		xy[i].Y = y
	}
	return xy
}

// wholeTicks are the default ticks labelled as whole numbers.
type wholeTicks struct{}

// Ticks implements [plot.Ticker].
func (wholeTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', 0, 64)
		}
	}
	return ts
}

// yearTicks mark every year's first day on a time axis of Unix seconds.
type yearTicks struct{}

// Ticks implements [plot.Ticker].
func (yearTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for y := time.Unix(int64(lo), 0).UTC().Year(); ; y++ {
		at := float64(time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
		if at > hi {
			return ts
		}
		if at >= lo {
			ts = append(ts, plot.Tick{Value: at, Label: strconv.Itoa(y)})
		}
	}
}
