package marketdata

import (
	"strings"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit/marketdata/calendar"
)

// Namespace is the UUID namespace of the name-based (version 5) ids that
// marketdata derives from natural keys, so that the same exchange, asset,
// industry, index, price or holiday has the same id in every database and
// re-imports keep ids stable.
var Namespace = uuid.MustParse("6f1d3c2a-8b4e-5f70-9a1b-2c3d4e5f6a7b")

// ExchangeID returns the id of the exchange with the given symbol
// (case-insensitive): uuid.NewSHA1(Namespace, "exchange:"+SYMBOL).
func ExchangeID(symbol string) uuid.UUID {
	return uuid.NewSHA1(Namespace, []byte("exchange:"+NormalizeSymbol(symbol)))
}

// AssetID returns the id given to a new asset with the given symbol
// (case-insensitive): uuid.NewSHA1(Namespace, "asset:"+SYMBOL).
func AssetID(symbol string) uuid.UUID {
	return uuid.NewSHA1(Namespace, []byte("asset:"+NormalizeSymbol(symbol)))
}

// IndexID returns the id given to a new index with the given symbol
// (case-insensitive).
func IndexID(symbol string) uuid.UUID {
	return uuid.NewSHA1(Namespace, []byte("index:"+NormalizeSymbol(symbol)))
}

// IndustryID returns the id given to a new industry node of the given
// level and name (the name compared case-insensitively).
func IndustryID(level Level, name string) uuid.UUID {
	return uuid.NewSHA1(Namespace, []byte("industry:"+string(level)+":"+strings.ToLower(strings.TrimSpace(name))))
}

// PriceID returns the id of the price record of an asset on a date:
// uuid.NewSHA1(assetID, "YYYY-MM-DD"). Re-importing a date keeps its id.
func PriceID(assetID uuid.UUID, d calendar.Date) uuid.UUID {
	var buf [10]byte
	return uuid.NewSHA1(assetID, appendDate(buf[:0], d))
}

// HolidayID returns the id of an exchange's holiday on a date:
// uuid.NewSHA1(exchangeID, "holiday:YYYY-MM-DD").
func HolidayID(exchangeID uuid.UUID, d calendar.Date) uuid.UUID {
	return uuid.NewSHA1(exchangeID, []byte("holiday:"+d.String()))
}

// NormalizeSymbol returns symbol as it is stored: trimmed and upper case.
// Symbol lookups compare normalised symbols, so they ignore case.
func NormalizeSymbol(symbol string) string {
	return strings.ToUpper(strings.TrimSpace(symbol))
}

// appendDate appends d as YYYY-MM-DD; years are 4 digits.
func appendDate(b []byte, d calendar.Date) []byte {
	y, m, dd := d.Year, int(d.Month), d.Day
	return append(b,
		byte('0'+y/1000%10), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-',
		byte('0'+dd/10), byte('0'+dd%10))
}
