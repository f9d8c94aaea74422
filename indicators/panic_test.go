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
		{"WMA period 0", func() { WMA(x, 0) }, "WMA period 0"},
		{"DEMA period 0", func() { DEMA(x, 0) }, "DEMA period 0"},
		{"TEMA period 0", func() { TEMA(x, 0) }, "TEMA period 0"},
		{"StdDev period 0", func() { StdDev(x, 0, 1) }, "StdDev period 0"},
		{"Highest period 0", func() { Highest(x, 0) }, "Highest period 0"},
		{"Lowest period 0", func() { Lowest(x, 0) }, "Lowest period 0"},
		{"Sum period 0", func() { Sum(x, 0) }, "Sum period 0"},
		{"ROC period 0", func() { ROC(x, 0) }, "ROC period 0"},
		{"Momentum period 0", func() { Momentum(x, 0) }, "Momentum period 0"},
		{"Stochastic lengths", func() { Stochastic(x, x, short, 5, 3, 3) }, "Stochastic length mismatch"},
		{"Stochastic slowD 0", func() { Stochastic(x, x, x, 5, 3, 0) }, "Stochastic slowD period 0"},
		{"WilliamsR period 0", func() { WilliamsR(x, x, x, 0) }, "WilliamsR period 0"},
		{"CCI lengths", func() { CCI(short, x, x, 3) }, "CCI length mismatch"},
		{"ADX period 1", func() { ADX(x, x, x, 1) }, "ADX period 1 is below 2"},
		{"PlusDI period 1", func() { PlusDI(x, x, x, 1) }, "PlusDI period 1 is below 2"},
		{"MinusDI lengths", func() { MinusDI(x, x, short, 3) }, "MinusDI length mismatch"},
		{"OBV lengths", func() { OBV(x, short) }, "OBV length mismatch"},
		{"MFI period 0", func() { MFI(x, x, x, x, 0) }, "MFI period 0"},
		{"VWAP lengths", func() { VWAP(x, x, x, short) }, "VWAP length mismatch"},
		{"RollingVWAP period 0", func() { RollingVWAP(x, x, x, x, 0) }, "RollingVWAP period 0"},
		{"Donchian lengths", func() { Donchian(x, short, 2) }, "Donchian length mismatch"},
		{"Keltner period 0", func() { Keltner(x, x, x, 0, 2) }, "Keltner period 0"},
		{"ParabolicSAR lengths", func() { ParabolicSAR(x, short, 0.02, 0.2) }, "ParabolicSAR length mismatch"},
		{"StdDevInto dst", func() { StdDevInto(short, x, 2, 1) }, "StdDev length mismatch"},
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
