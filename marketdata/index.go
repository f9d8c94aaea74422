package marketdata

import (
	"github.com/google/uuid"

	"github.com/tradekit/tradekit/calendar"
)

// Index is a market index. Its membership is a set of [Constituent]
// periods, so the constituents on any past date can be answered.
type Index struct {
	ID          uuid.UUID `bun:"id,pk"`
	Symbol      string    `bun:"symbol"`
	Name        string    `bun:"name"`
	Description string    `bun:"description"`
	// AssetCount is the number of constituents on the date the store was
	// asked about. It is not stored.
	AssetCount int `bun:"-"`
}

// Constituent is one period of an asset's membership of an index: from
// From (included) to To (excluded); a zero To means the asset is still a
// member.
type Constituent struct {
	IndexID uuid.UUID
	AssetID uuid.UUID
	From    calendar.Date
	To      calendar.Date
}

// Contains reports whether the period includes d.
func (c Constituent) Contains(d calendar.Date) bool {
	return !d.Before(c.From) && (c.To == calendar.Date{} || d.Before(c.To))
}
