package bulk

import (
	"context"
	"errors"
	"math/bits"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// daySet is a set of days (rowKey.day), a bitmap over the span seen.
type daySet struct {
	base  int32 // the day of bit 0 of words[0], a multiple of 64
	words []uint64
}

// add adds day and reports whether it was new.
func (s *daySet) add(day int32) bool {
	w := day >> 6
	if s.words == nil {
		s.base = w
	}
	switch {
	case w < s.base:
		grow := int(s.base - w)
		s.words = append(make([]uint64, grow, grow+len(s.words)), s.words...)
		s.base = w
	case int(w-s.base) >= len(s.words):
		s.words = append(s.words, make([]uint64, int(w-s.base)-len(s.words)+1)...)
	}
	i := w - s.base
	bit := uint64(1) << (day & 63)
	if s.words[i]&bit != 0 {
		return false
	}
	s.words[i] |= bit
	return true
}

// first returns the earliest day of s; ok is false when s is empty.
func (s *daySet) first() (day int32, ok bool) {
	for i, w := range s.words {
		if w != 0 {
			return (s.base+int32(i))<<6 + int32(bits.TrailingZeros64(w)), true
		}
	}
	return 0, false
}

// union adds the days of o to s.
func (s *daySet) union(o *daySet) {
	o.each(func(day int32) { s.add(day) })
}

// each calls fn with every day of s, in ascending order.
func (s *daySet) each(fn func(day int32)) {
	for i, w := range s.words {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			fn((s.base+int32(i))<<6 + int32(b))
			w &= w - 1
		}
	}
}

// maxNonTradingDays is how many rows dated on non-trading days a
// [Result] lists, the earliest.
const maxNonTradingDays = 10

// nonTradingDays returns the number of the days of days (asset id to the
// days written for it) on which the asset's exchange does not trade by its
// calendar, and the earliest [maxNonTradingDays] of them. Assets without
// an exchange calendar count none.
func nonTradingDays(ctx context.Context, ld *marketdata.Loader, days map[uuid.UUID]*daySet) (int, []NonTradingDay, error) {
	if len(days) == 0 {
		return 0, nil, nil
	}
	assets, err := ld.AssetExchanges(ctx)
	if err != nil {
		return 0, nil, err
	}
	type exchangeDays struct {
		ex      marketdata.Exchange
		cal     *calendar.Calendar
		ok      bool
		trading map[int32]bool // by rowKey.day, as far as asked
	}
	st := ld.Store()
	exchanges := map[uuid.UUID]*exchangeDays{}
	n := 0
	var out []NonTradingDay
	for _, a := range assets {
		ds := days[a.ID]
		if ds == nil {
			continue
		}
		x := exchanges[a.ExchangeID]
		if x == nil {
			x = &exchangeDays{trading: map[int32]bool{}}
			ex, err := st.Exchange(ctx, a.ExchangeID)
			if err != nil && !errors.Is(err, tradekit.ErrNotFound) {
				return 0, nil, err
			}
			x.ex = ex
			x.cal, x.ok = ex.Calendar()
			exchanges[a.ExchangeID] = x
		}
		if !x.ok {
			continue
		}
		listed := 0
		ds.each(func(day int32) {
			trading, ok := x.trading[day]
			if !ok {
				trading = x.cal.IsTradingDay(dayEpoch.AddDays(int(day)))
				x.trading[day] = trading
			}
			if trading {
				return
			}
			n++
			if listed < maxNonTradingDays { // days come in order: the asset's earliest
				out = append(out, NonTradingDay{Symbol: a.Symbol, Exchange: x.ex, Date: dayEpoch.AddDays(int(day))})
				listed++
			}
		})
	}
	slices.SortFunc(out, func(a, b NonTradingDay) int {
		if c := a.Date.Compare(b.Date); c != 0 {
			return c
		}
		return strings.Compare(a.Symbol, b.Symbol)
	})
	return n, out[:min(len(out), maxNonTradingDays)], nil
}
