package backtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/indicators/formula"
)

// Strategy is a backtest's rules: when to enter and leave a position, how
// large a position is, and what trading costs.
type Strategy struct {
	// Entry and Exit are formulas in the formula language
	// (indicators/formula): a bar whose value is non-zero (and defined)
	// signals at its close.
	Entry string `json:"entry"`
	Exit  string `json:"exit"`
	// MaxPositions bounds the positions held at once. Default 1.
	MaxPositions int `json:"maxPositions"`
	// PositionPct is the size of a new position in percent of the equity
	// at the previous close. Default 100 / MaxPositions.
	PositionPct float64 `json:"positionPct"`
	// StopLossPct and TakeProfitPct, when not 0, close a position during
	// a bar whose low (high) reaches that percentage below (above) its
	// entry price.
	StopLossPct   float64 `json:"stopLossPct"`
	TakeProfitPct float64 `json:"takeProfitPct"`
	// CommissionBps is charged on the value of every fill, and SlippageBps
	// moves every fill against the trader, both in basis points.
	CommissionBps float64 `json:"commissionBps"`
	SlippageBps   float64 `json:"slippageBps"`
}

// canonicalVersion is the version of the canonical form; it is part of
// the form, so that a later change of the rules changes every hash.
const canonicalVersion = 1

// Compiled is a checked strategy with its formulas parsed.
type Compiled struct {
	Strategy    // with the defaults filled in and the formulas in canonical form
	entry, exit *formula.Expr
}

// Compile checks the strategy, fills in the defaults and parses the
// formulas. The error is a [*tradekit.ParamError] naming the field at
// fault (entry, exit, maxPositions, ...); for a formula, its message is
// the formula's syntax error.
func (s Strategy) Compile() (*Compiled, error) {
	c := &Compiled{Strategy: s}
	var err error
	if c.entry, err = parseSignal("entry", s.Entry); err != nil {
		return nil, err
	}
	if c.exit, err = parseSignal("exit", s.Exit); err != nil {
		return nil, err
	}
	c.Entry, c.Exit = c.entry.String(), c.exit.String()
	if c.MaxPositions == 0 {
		c.MaxPositions = 1
	}
	if c.MaxPositions < 1 || c.MaxPositions > MaxPositions {
		return nil, &tradekit.ParamError{Param: "maxPositions", Msg: fmt.Sprintf("must be from 1 to %d, got %d", MaxPositions, s.MaxPositions)}
	}
	if c.PositionPct == 0 {
		c.PositionPct = 100 / float64(c.MaxPositions)
	}
	for _, f := range []struct {
		name     string
		v, limit float64
	}{
		{"positionPct", c.PositionPct, 100}, {"stopLossPct", c.StopLossPct, 100}, {"takeProfitPct", c.TakeProfitPct, 10000},
		{"commissionBps", c.CommissionBps, 1000}, {"slippageBps", c.SlippageBps, 1000},
	} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > f.limit {
			return nil, &tradekit.ParamError{Param: f.name, Msg: fmt.Sprintf("must be from 0 to %g, got %g", f.limit, f.v)}
		}
	}
	if c.PositionPct == 0 {
		return nil, &tradekit.ParamError{Param: "positionPct", Msg: "must be more than 0"}
	}
	return c, nil
}

// MaxPositions is the most positions a strategy may hold at once.
const MaxPositions = 1000

func parseSignal(field, src string) (*formula.Expr, error) {
	if strings.TrimSpace(src) == "" {
		return nil, &tradekit.ParamError{Param: field, Msg: "is required: a formula, such as crossover(sma(close, 50), sma(close, 200))"}
	}
	e, err := formula.Parse(src)
	if err != nil {
		return nil, &tradekit.ParamError{Param: field, Msg: err.Error()}
	}
	return e, nil
}

// Canonical returns the canonical JSON form of the compiled strategy:
// every field, the defaults filled in, the formulas as the formula
// package prints them (so spacing and redundant parentheses do not
// matter), numbers in Go's shortest form, and the form's version.
func (c *Compiled) Canonical() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "close < 5", not "close \u003c 5"
	err := enc.Encode(struct {
		Version int `json:"v"`
		Strategy
	}{canonicalVersion, c.Strategy})
	if err != nil {
		panic("backtest: " + err.Error()) // a struct of strings and finite numbers always marshals
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Hash returns the strategy hash: the hex SHA-256 of [Compiled.Canonical].
// Two definitions with the same rules have the same hash.
func (c *Compiled) Hash() string {
	h := sha256.Sum256(c.Canonical())
	return hex.EncodeToString(h[:])
}
