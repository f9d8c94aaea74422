package marketdata

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
)

// ---- exchanges ----

const exchangeColumns = "id, symbol, mic, name, timezone, country, currency, open_time, close_time"

// Exchanges returns every exchange, by symbol.
func (s *Store) Exchanges(ctx context.Context) ([]Exchange, error) {
	var out []Exchange
	if err := s.db.NewRaw("SELECT "+exchangeColumns+" FROM exchanges ORDER BY symbol").Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("marketdata: exchanges: %w", err)
	}
	return out, nil
}

// Exchange returns the exchange with the given id. The error wraps
// [tradekit.ErrNotFound] when there is none.
func (s *Store) Exchange(ctx context.Context, id uuid.UUID) (Exchange, error) {
	var e Exchange
	if err := s.db.NewRaw("SELECT "+exchangeColumns+" FROM exchanges WHERE id = ?", id).Scan(ctx, &e); err != nil {
		return Exchange{}, notFound(err, "exchange %s", id)
	}
	return e, nil
}

// ExchangeBySymbol returns the exchange with the given symbol, ignoring
// case. The error wraps [tradekit.ErrNotFound] when there is none.
func (s *Store) ExchangeBySymbol(ctx context.Context, symbol string) (Exchange, error) {
	var e Exchange
	err := s.db.NewRaw("SELECT "+exchangeColumns+" FROM exchanges WHERE symbol = ?", strings.ToUpper(symbol)).Scan(ctx, &e)
	if err != nil {
		return Exchange{}, notFound(err, "exchange %s", tradekit.Quote(symbol))
	}
	return e, nil
}
