package connect

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/brokers"
)

// fillingBroker fills a buy of 10 shares at 50 just before its call
// number fillAt (counting Account and Positions calls), as a broker whose
// matcher runs while the sync reads.
type fillingBroker struct {
	calls, fillAt int
	filled        bool
}

func (b *fillingBroker) tick() {
	b.calls++
	if b.calls == b.fillAt {
		b.filled = true
	}
}

func (b *fillingBroker) Account(context.Context) (brokers.Account, error) {
	b.tick()
	cash := decimal.New(1000, 0)
	if b.filled {
		cash = decimal.New(500, 0)
	}
	return brokers.Account{Cash: cash, Equity: decimal.New(1000, 0)}, nil
}

func (b *fillingBroker) Positions(context.Context) ([]brokers.Position, error) {
	b.tick()
	if !b.filled {
		return nil, nil
	}
	return []brokers.Position{{Symbol: "X", Quantity: decimal.New(10, 0)}}, nil
}

func (b *fillingBroker) Fills(context.Context, time.Time) ([]brokers.Fill, error) { return nil, nil }
func (b *fillingBroker) History(context.Context) ([]brokers.EquityPoint, error) {
	return nil, nil
}

// TestSnapshot checks that a fill between the reads never pairs the cash
// from one side of it with the positions from the other.
func TestSnapshot(t *testing.T) {
	t.Parallel()
	for fillAt := 1; fillAt <= 6; fillAt++ {
		b := &fillingBroker{fillAt: fillAt}
		acct, pos, _, _, err := snapshot(context.Background(), b, nil)
		if err != nil {
			t.Fatal(err)
		}
		paid := acct.Cash.Equal(decimal.New(500, 0))
		if held := len(pos) == 1; held != paid {
			t.Errorf("fill before call %d: cash %s with %d positions", fillAt, acct.Cash, len(pos))
		}
	}
}
