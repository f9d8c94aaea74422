package marketdata

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// AssetType is the kind of an instrument.
type AssetType string

// The asset types.
const (
	Stock     AssetType = "stock"
	ETF       AssetType = "etf"
	FX        AssetType = "fx"
	Crypto    AssetType = "crypto"
	Commodity AssetType = "commodity"
)

// AssetTypes lists every [AssetType].
func AssetTypes() []AssetType { return []AssetType{Stock, ETF, FX, Crypto, Commodity} }

// IsValid reports whether t is one of [AssetTypes].
func (t AssetType) IsValid() bool {
	switch t {
	case Stock, ETF, FX, Crypto, Commodity:
		return true
	}
	return false
}

// Asset is a tradeable instrument.
type Asset struct {
	ID uuid.UUID `bun:"id,pk"`
	// Symbol is the ticker, stored upper case ([NormalizeSymbol]).
	Symbol     string    `bun:"symbol"`
	Name       string    `bun:"name"`
	Type       AssetType `bun:"type"`
	ExchangeID uuid.UUID `bun:"exchange_id"`
	// Currency is the ISO 4217 code of the asset's prices.
	Currency string `bun:"currency"`
	IsActive bool   `bun:"is_active"`
	// IndustryID is the node of the industry tree the asset belongs to
	// (normally an industry, the lowest level), or nil.
	IndustryID *uuid.UUID `bun:"industry_id"`
}

// Profile is the company profile of an asset.
type Profile struct {
	AssetID     uuid.UUID       `bun:"asset_id,pk"`
	Description string          `bun:"description"`
	Sector      string          `bun:"sector"`
	Industry    string          `bun:"industry"`
	MarketCap   decimal.Decimal `bun:"market_cap"`
	Website     string          `bun:"website"`
	LogoURL     string          `bun:"logo_url"`
}

// Fundamentals are the latest fundamental figures of an asset.
// DividendYield is a fraction (0.021 is 2.1 %).
type Fundamentals struct {
	AssetID       uuid.UUID       `bun:"asset_id,pk"`
	PERatio       decimal.Decimal `bun:"pe_ratio"`
	EPS           decimal.Decimal `bun:"eps"`
	Revenue       decimal.Decimal `bun:"revenue"`
	MarketCap     decimal.Decimal `bun:"market_cap"`
	DividendYield decimal.Decimal `bun:"dividend_yield"`
	Beta          decimal.Decimal `bun:"beta"`
	UpdatedAt     time.Time       `bun:"updated_at"`
}
