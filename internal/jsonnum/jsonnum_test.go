package jsonnum

import (
	"encoding/json"
	"math"
	"testing"
)

func TestAppendFloat(t *testing.T) {
	for _, tt := range []struct {
		x    float64
		want string
	}{
		{1036.7494999999994, "1036.7495"},
		{3.9035897196342892, "3.90358971963429"},
		{-1.264496028617046, "-1.26449602861705"},
		{0.6728055375747746, "0.672805537574775"},
		{0.1 + 0.2, "0.3"},
		{0.1, "0.1"},
		{148.11, "148.11"},
		{100, "100"},
		{0, "0"},
		{123456789012345678, "123456789012346000"},
		{1e21, "1e+21"},
		{1.2345678901234567e-7, "1.23456789012346e-7"},
		{math.SmallestNonzeroFloat64, "5e-324"},
	} {
		if got := string(AppendFloat(nil, tt.x)); got != tt.want {
			t.Errorf("AppendFloat(%v) = %s, want %s", tt.x, got, tt.want)
		}
	}
}

func TestRound(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"SMA_20":1036.7494999999994,"n":3}`, `{"SMA_20":1036.7495,"n":3}`},
		{`[0.30000000000000004,-2.5e-17,12]`, `[0.3,-2.5e-17,12]`},
		{`{"s":"1036.7494999999994","t":"a\"0.30000000000000004"}`, `{"s":"1036.7494999999994","t":"a\"0.30000000000000004"}`},
		{`{"price":"57.25","qty":1e-7,"big":12345678901234567890}`, `{"price":"57.25","qty":1e-7,"big":12345678901234600000}`},
		{`{"exact":0.000000000000001,"zeros":100000000000000000000}`, `{"exact":0.000000000000001,"zeros":100000000000000000000}`},
		{``, ``},
	} {
		got := Round([]byte(tt.in))
		if string(got) != tt.want {
			t.Errorf("Round(%s) = %s, want %s", tt.in, got, tt.want)
		}
		if tt.in != "" && !json.Valid(got) {
			t.Errorf("Round(%s) = %s: not JSON", tt.in, got)
		}
	}
	doc := []byte(`{"a":1.5,"b":"x"}`)
	if got := Round(doc); &got[0] != &doc[0] {
		t.Error("a document without long numbers was copied")
	}
}

// BenchmarkRound measures Round over a document of 10,000 numbers that
// need no change, the common case of an indicator series.
func BenchmarkRound(b *testing.B) {
	doc := []byte(`[`)
	for i := range 10000 {
		if i > 0 {
			doc = append(doc, ',')
		}
		doc = append(doc, `{"date":"2026-11-27","value":1036.75}`...)
	}
	doc = append(doc, ']')
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		Round(doc)
	}
}
