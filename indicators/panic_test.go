package indicators

import (
	"strings"
	"testing"
)

// panics runs f and returns the panic message, or "" if f returned.
func panics(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			if msg == "" {
				msg = "non-string panic"
			}
		}
	}()
	f()
	return ""
}

func TestPanics(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	short := []float64{1, 2}
	tests := []struct {
		name string
		f    func()
		want string // a fragment of the message
	}{
		{"SMA period 0", func() { SMA(x, 0) }, "SMA period 0 is below 1"},
		{"EMA period -1", func() { EMA(x, -1) }, "EMA period -1 is below 1"},
		{"RSI period 1", func() { RSI(x, 1) }, "RSI period 1 is below 2"},
		{"ATR period 0", func() { ATR(x, x, x, 0) }, "ATR period 0"},
		{"ATR lengths", func() { ATR(x, short, x, 3) }, "ATR length mismatch"},
		{"MACD fast 0", func() { MACD(x, 0, 26, 9) }, "MACD fast period 0"},
		{"MACD signal 0", func() { MACD(x, 12, 26, 0) }, "MACD signal period 0"},
		{"BollingerBands period 0", func() { BollingerBands(x, 0, 2) }, "BollingerBands period 0"},
		{"SMAInto dst", func() { SMAInto(short, x, 2) }, "SMA length mismatch"},
		{"MACDInto dst", func() { MACDInto(x, x, short, x, 2, 3, 2) }, "MACD length mismatch"},
		{"NewSMAStream 0", func() { NewSMAStream(0) }, "SMA period 0"},
		{"NewRSIStream 1", func() { NewRSIStream(1) }, "RSI period 1"},
		{"NewMACDStream 0", func() { NewMACDStream(12, 0, 9) }, "MACD slow period 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := panics(tt.f)
			if !strings.HasPrefix(msg, "indicators: ") || !strings.Contains(msg, tt.want) {
				t.Errorf("panic %q, want an \"indicators: \" message containing %q", msg, tt.want)
			}
		})
	}
}
