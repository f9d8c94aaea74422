package studies

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/indicators/formula"
)

// Limits on custom indicators.
const (
	MaxCustom      = 100            // per user
	MaxFormula     = formula.MaxLen // characters
	MaxName        = 100            // characters
	MaxDescription = 2000           // characters
)

// CustomIndicator is a user's indicator defined by a formula of the
// indicators/formula language. A deleted one keeps its row with DeletedAt.
type CustomIndicator struct {
	ID          uuid.UUID  `bun:"id,pk"`
	UserID      uuid.UUID  `bun:"user_id"`
	Name        string     `bun:"name"`
	Formula     string     `bun:"formula"`
	Description string     `bun:"description"`
	CreatedAt   time.Time  `bun:"created_at"`
	UpdatedAt   time.Time  `bun:"updated_at"`
	DeletedAt   *time.Time `bun:"deleted_at"`
}

// Validate checks c's name, description and formula, which must parse.
// All three must be UTF-8 without control characters, but for tabs and
// line breaks in the description and the formula. Errors are *tradekit.ParamError naming the field; a formula's message
// gives the position and the problem, as in "1:12: sma expects 2
// arguments, got 1".
func (c *CustomIndicator) Validate() error {
	_, err := c.Parse()
	return err
}

// Parse validates c and returns its parsed formula.
func (c *CustomIndicator) Parse() (*formula.Expr, error) {
	switch n := utf8.RuneCountInString(c.Name); {
	case strings.TrimSpace(c.Name) == "":
		return nil, &tradekit.ParamError{Param: "name", Msg: "is required"}
	case n > MaxName:
		return nil, &tradekit.ParamError{Param: "name", Msg: fmt.Sprintf("is %d characters long; at most %d are allowed", n, MaxName)}
	}
	for _, f := range []struct {
		param, text string
		multiline   bool
	}{{"name", c.Name, false}, {"description", c.Description, true}, {"formula", c.Formula, true}} {
		if msg := checkText(f.text, f.multiline); msg != "" {
			return nil, &tradekit.ParamError{Param: f.param, Msg: msg}
		}
	}
	if n := utf8.RuneCountInString(c.Description); n > MaxDescription {
		return nil, &tradekit.ParamError{Param: "description", Msg: fmt.Sprintf("is %d characters long; at most %d are allowed", n, MaxDescription)}
	}
	if strings.TrimSpace(c.Formula) == "" {
		return nil, &tradekit.ParamError{Param: "formula", Msg: "is required"}
	}
	if n := utf8.RuneCountInString(c.Formula); n > MaxFormula {
		return nil, &tradekit.ParamError{Param: "formula", Msg: fmt.Sprintf("is %d characters long; at most %d are allowed", n, MaxFormula)}
	}
	e, err := formula.Parse(c.Formula)
	if err != nil {
		var se *formula.SyntaxError
		if errors.As(err, &se) {
			return nil, &tradekit.ParamError{Param: "formula", Msg: se.Error()}
		}
		return nil, err
	}
	return e, nil
}

// CustomPatch changes some fields of a custom indicator: those not nil.
type CustomPatch struct {
	Name, Formula, Description *string
}

// Apply sets the fields of p on c.
func (p CustomPatch) Apply(c *CustomIndicator) {
	if p.Name != nil {
		c.Name = *p.Name
	}
	if p.Formula != nil {
		c.Formula = *p.Formula
	}
	if p.Description != nil {
		c.Description = *p.Description
	}
}

// checkText returns what is wrong with a text field, "" when nothing is:
// bytes that are not UTF-8, or control characters (tabs and line breaks
// are allowed when multiline), which a database may store otherwise than
// it was given (PostgreSQL refuses NUL in text) and a page may not show.
func checkText(s string, multiline bool) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && (r == '\t' || r == '\n' || r == '\r')) {
			return fmt.Sprintf("holds the control character U+%04X", r)
		}
	}
	return ""
}
