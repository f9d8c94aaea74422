package marketdata_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/marketdata"
)

// FuzzReadPricesCSV: the reader never panics, every error is a
// *ParseError wrapping tradekit.ErrInvalid, and every bar it returns is
// valid, with distinct dates.
func FuzzReadPricesCSV(f *testing.F) {
	f.Add("date,open,high,low,close,volume\n2024-01-02,1,2,0.5,1.5,10\n")
	f.Add("Date,Open,High,Low,Close,Adj Close,Volume\r\n2024-01-02,187.15,188.44,183.89,185.64,184.94,82488700\r\n")
	f.Add("\ufeffVOLUME,CLOSE,LOW,HIGH,OPEN,DATE\n5,2,1,3,2,2024-02-29\n\n")
	f.Add("date,open,high,low,close,volume\n2024-01-02,1,2,0.5,1.5,10\n2024-01-02,1,2,0.5,1.5,10\n")
	f.Add("date,open,high,low,close,volume\n\"2024-01-02,1,2,0.5,1.5,10\n")
	f.Add("date,open,high,low,close,volume\n2024-01-02,1e400,2,0.5,1.5,1.0\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		bars, err := marketdata.ReadPricesCSV(strings.NewReader(in))
		if err != nil {
			var pe *marketdata.ParseError
			if !errors.As(err, &pe) || !errors.Is(err, tradekit.ErrInvalid) {
				t.Fatalf("error %v (%T) is not a *ParseError wrapping ErrInvalid", err, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, b := range bars {
			if err := b.Validate(); err != nil {
				t.Fatalf("returned an invalid bar: %v", err)
			}
			if seen[b.Date.String()] {
				t.Fatalf("date %s twice", b.Date)
			}
			seen[b.Date.String()] = true
		}
	})
}
