package marketdata

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit/calendar"
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

// PriceID returns the id of the price record of an asset on a date. The id
// is not stored: it encodes the two, so that a record keeps its id across
// re-imports and a lookup by id needs no index of its own. Its 16 bytes
// are those of a version 8 (custom) UUID of RFC 9562:
//
//	bytes 0-11   the asset id's bytes 0-11, with the version nibble (the
//	             high half of byte 6) set to 8
//	bytes 12-15  the date as days since 1900-01-01, big-endian
//
// Two assets whose ids share their first 12 bytes but the version nibble
// would collide; with random or name-based asset ids that has probability
// about n^2/2^91 for n assets.
func PriceID(assetID uuid.UUID, d calendar.Date) uuid.UUID {
	id := assetID
	id[6] = id[6]&0x0f | 0x80
	binary.BigEndian.PutUint32(id[12:], uint32(d.Sub(priceEpoch)))
	return id
}

// priceEpoch is day 0 of the dates in price ids.
var priceEpoch = calendar.Date{Year: 1900, Month: time.January, Day: 1}

// parsePriceID splits a price id into the asset-id bytes it carries and
// the date; ok is false when id is not a price id.
func parsePriceID(id uuid.UUID) (asset [12]byte, d calendar.Date, ok bool) {
	if id.Version() != 8 || id.Variant() != uuid.RFC4122 {
		return asset, d, false
	}
	copy(asset[:], id[:12])
	d = priceEpoch.AddDays(int(binary.BigEndian.Uint32(id[12:])))
	return asset, d, d.Year <= 9999
}

// matchesPriceID reports whether assetID is the asset a price id carries.
func matchesPriceID(assetID uuid.UUID, asset [12]byte) bool {
	for i := range 12 {
		a, b := assetID[i], asset[i]
		if i == 6 {
			a, b = a&0x0f, b&0x0f
		}
		if a != b {
			return false
		}
	}
	return true
}

// HolidayID returns the id of an exchange's holiday on a date:
// uuid.NewSHA1(exchangeID, "holiday:YYYY-MM-DD").
func HolidayID(exchangeID uuid.UUID, d calendar.Date) uuid.UUID {
	return uuid.NewSHA1(exchangeID, []byte("holiday:"+d.String()))
}

// NormalizeSymbol returns symbol as it is stored: trimmed and upper case.
// Symbol lookups ignore case but trim nothing: " ACME" is not "ACME".
func NormalizeSymbol(symbol string) string {
	return strings.ToUpper(strings.TrimSpace(symbol))
}
