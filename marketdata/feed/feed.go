package feed

import (
	"context"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// Bar is one symbol's raw (unadjusted) daily bar as a provider reports it.
type Bar struct {
	Symbol                 string
	Open, High, Low, Close decimal.Decimal
	Volume                 int64
}

// AssetInfo is a provider's reference data for a symbol, used to create
// an asset the database does not know yet.
type AssetInfo struct {
	Symbol string
	Name   string
	Type   marketdata.AssetType
	// MIC is the ISO 10383 code of the primary exchange (XNYS, XNAS, …),
	// or "" when the provider gives none.
	MIC      string
	Currency string
}

// Action is a split or cash dividend of a symbol, as a provider reports
// it. Value is the ratio (new shares per old share) for a split, the
// amount per share for a dividend, as in [marketdata.Action].
type Action struct {
	Symbol string
	Date   calendar.Date
	Kind   marketdata.ActionKind
	Value  decimal.Decimal
}

// Provider is one vendor's market-data client.
type Provider interface {
	// Name is the provider's name as the CLI spells it: "massive", "alpaca".
	Name() string
	// DayBars returns the raw daily bars of day. A provider that answers
	// for the whole market at once (Massive) ignores symbols; one that
	// needs symbols (Alpaca) asks for those. A day with no bars returns
	// none and no error.
	DayBars(ctx context.Context, day calendar.Date, symbols []string) ([]Bar, error)
	// Assets returns the reference data of the symbols it knows, in any
	// order; a symbol it does not know is left out.
	Assets(ctx context.Context, symbols []string) ([]AssetInfo, error)
	// Actions returns the splits and cash dividends whose ex-date is from
	// from to to, both included, of the symbols (every symbol when the
	// provider can list them all).
	Actions(ctx context.Context, from, to calendar.Date, symbols []string) ([]Action, error)
}

// ErrAuth is wrapped by the error of a request the provider refused for
// its credentials or plan (HTTP 401 or 403). A run stops at the first
// one: every later request would be refused as well.
var ErrAuth = fmt.Errorf("feed: provider refused the credentials: %w", tradekit.ErrUnauthorized)

// IsAuth reports whether err is a refusal of the credentials ([ErrAuth]).
func IsAuth(err error) bool { return errors.Is(err, ErrAuth) }
