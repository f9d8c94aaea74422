package connect

import (
	"context"
	"errors"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// Valued is a position valued at Tradekit's stored prices.
type Valued struct {
	Position
	// Price is the latest stored close of the position's asset, on
	// PriceDate; zero when the symbol is no Tradekit asset or has no
	// stored price, and then MarketValue is the broker's.
	Price     decimal.Decimal
	PriceDate calendar.Date
	// MarketValue is Quantity × Price, or the broker's value without a
	// stored price.
	MarketValue decimal.Decimal
	// UnrealizedPnL is MarketValue − Quantity × AverageCost.
	UnrealizedPnL decimal.Decimal
}

// Value values the portfolio's positions at the latest stored closes and
// returns them with the portfolio's equity so valued: cash plus the market
// values.
func Value(ctx context.Context, md *marketdata.Store, p Portfolio) ([]Valued, decimal.Decimal, error) {
	out := make([]Valued, len(p.Positions))
	equity := p.Cash
	for i, x := range p.Positions {
		v := Valued{Position: x}
		if x.BrokerValue != nil {
			v.MarketValue = *x.BrokerValue
		}
		if x.AssetID != nil {
			pr, err := md.LatestPrice(ctx, *x.AssetID)
			switch {
			case err == nil:
				v.Price, v.PriceDate = pr.Close, pr.Date
				v.MarketValue = x.Quantity.Mul(pr.Close)
			case !errors.Is(err, tradekit.ErrNotFound):
				return nil, decimal.Decimal{}, err
			}
		}
		v.UnrealizedPnL = v.MarketValue.Sub(x.Quantity.Mul(x.AverageCost))
		equity = equity.Add(v.MarketValue)
		out[i] = v
	}
	return out, equity, nil
}
