package marketdata

import "github.com/google/uuid"

// Level is the level of a node in the three-level industry tree.
type Level string

// The levels, from the top.
const (
	Sector        Level = "sector"
	IndustryGroup Level = "industry_group"
	IndustryLevel Level = "industry"
)

// IsValid reports whether l is one of the three levels.
func (l Level) IsValid() bool {
	return l == Sector || l == IndustryGroup || l == IndustryLevel
}

// parent returns the level above l, and "" for a sector.
func (l Level) parent() Level {
	switch l {
	case IndustryGroup:
		return Sector
	case IndustryLevel:
		return IndustryGroup
	}
	return ""
}

// Industry is a node of the industry tree: a sector (no parent), an
// industry group (parent a sector) or an industry (parent a group).
type Industry struct {
	ID       uuid.UUID  `bun:"id,pk"`
	Name     string     `bun:"name"`
	Level    Level      `bun:"level"`
	ParentID *uuid.UUID `bun:"parent_id"`
	// AssetCount counts the assets at this node or anywhere below it. The
	// store fills it in on reads; it is not stored.
	AssetCount int `bun:"-"`
}
