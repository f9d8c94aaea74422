package brokers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
)

// The rules [Check] evaluates, named as the API names the guardrails.
const (
	RuleMaxDailyTrades      = "maxDailyTrades"
	RuleMaxPositionSizePct  = "maxPositionSizePct"
	RuleMaxPortfolioRiskPct = "maxPortfolioRiskPct"
	RuleStopLossRequired    = "stopLossRequired"
	RuleAllowedAssetTypes   = "allowedAssetTypes"
	// RuleHeldQuantity is not a guardrail but the account's means: a
	// sell beyond what is held, where the account cannot sell short.
	RuleHeldQuantity = "heldQuantity"
)

// PctPlaces is the number of decimal places of the percentages [Check]
// reports: they are rounded half away from zero with
// [decimal.Decimal.DivRound]. The limits themselves are compared exactly,
// before any rounding.
const PctPlaces = 8

// DefaultStopATRs and FallbackStopPct define the stop-loss distance
// assumed for a position or an order without a stop-loss price: twice the
// asset's ATR(14), at most the price; or, when the ATR is unknown (zero),
// FallbackStopPct percent of the price. See the package documentation.
const (
	DefaultStopATRs = 2
	FallbackStopPct = 10
)

var (
	one         = decimal.New(1, 0)
	stopATRs    = decimal.New(DefaultStopATRs, 0)
	fallbackPct = decimal.New(FallbackStopPct, -2) // FallbackStopPct / 100
)

// Context is what [Check] needs to know of the account and the market
// besides the order and the guardrails. Every price is in the account's
// currency.
type Context struct {
	// Price is the latest stored price of the order's asset. A market
	// order executes at it; a limit order ignores it.
	Price decimal.Decimal
	// ATR is the ATR(14) of the order's asset, in price units, or zero if
	// unknown; it sets the risk of an order without a stop-loss price.
	ATR decimal.Decimal
	// Equity is the account's cash plus the market value of its positions.
	Equity decimal.Decimal
	// Cash is the account's cash. None of the five guardrails reads it;
	// it is part of the account's state a check is made against.
	Cash decimal.Decimal
	// Positions are the account's open positions, at most one per symbol.
	Positions []Held
	// Open are the account's open orders (accepted, not yet filled,
	// cancelled or rejected): each holds exposure in reserve until it is
	// filled, cancelled, rejected or expires.
	Open []Reservation
	// TradesToday is the number of orders accepted since 00:00 UTC of the
	// current day (see [UTCDay]), not counting the order being checked.
	TradesToday int
	// CanShort reports that the account may sell what it does not hold
	// (a margin account with shorting enabled). When false, the zero
	// value, a sell beyond the held quantity breaks [RuleHeldQuantity].
	CanShort bool
}

// Held is an open position as [Check] sees it.
type Held struct {
	Symbol   string
	Quantity decimal.Decimal // negative for a short position
	Price    decimal.Decimal // the latest stored price of the asset
	// StopLossPrice is the position's protective stop, nil if none.
	StopLossPrice *decimal.Decimal
	// ATR is the ATR(14) of the asset, in price units, or zero if unknown.
	ATR decimal.Decimal
}

// Reservation is the exposure an open order holds in reserve. [Check]
// counts it as if it may fill at any moment; see the package
// documentation.
type Reservation struct {
	Symbol        string           // the asset's symbol, e.g. "AAPL"
	Quantity      decimal.Decimal  // signed: positive for a buy, negative for a sell; the part not yet filled
	Price         decimal.Decimal  // the reserved price: a limit order's limit, a market order's latest price plus slippage
	StopLossPrice *decimal.Decimal // the order's protective stop, nil if none
	ATR           decimal.Decimal  // ATR(14) of the asset, zero if unknown
}

// RuleCheck is one rule's evaluation: its limit, the value the order
// would bring it to, and whether the rule holds. For maxDailyTrades,
// maxPositionSizePct and maxPortfolioRiskPct the rule holds when Actual ≤
// Limit, or when Limit is zero (no limit). stopLossRequired and
// allowedAssetTypes are yes/no rules written as 1 (yes) and 0 (no), which
// hold when Actual ≥ Limit: Limit is 1 when a stop-loss is required of
// the order (or its asset type must be allowed, always), Actual is 1 when
// the order carries one (or its asset type is allowed).
type RuleCheck struct {
	Rule          string // one of the Rule constants, e.g. [RuleMaxDailyTrades]
	Limit, Actual decimal.Decimal
	OK            bool
	Message       string // why the rule fails, for people; empty when OK
}

// Violation is a rule an order breaks: the failing [RuleCheck] without
// its OK.
type Violation struct {
	Rule          string // one of the Rule constants, e.g. [RuleMaxDailyTrades]
	Limit, Actual decimal.Decimal
	Message       string // e.g. "this would be order 26 today (UTC), over the limit of 25"
}

// Result is the outcome of [Check]: every rule's evaluation and the
// figures behind them.
type Result struct {
	// Rules holds every rule's evaluation, passing or not, in the order
	// maxDailyTrades, maxPositionSizePct, maxPortfolioRiskPct,
	// stopLossRequired, allowedAssetTypes, heldQuantity.
	Rules []RuleCheck
	// Violations holds the rules that fail, in the same order; nil when
	// the order passes.
	Violations []Violation

	Price       decimal.Decimal // the execution price: the limit price, else Context.Price
	Notional    decimal.Decimal // Quantity × Price
	Position    decimal.Decimal // the signed quantity held after the order, open orders not counted
	Exposure    decimal.Decimal // the signed worst-case position after the order: held, plus the open orders on the order's side, plus the order
	PositionPct decimal.Decimal // |Exposure| × Price / equity × 100; zero if equity ≤ 0
	Risk        decimal.Decimal // the portfolio's risk after the order, open orders included, in money
	RiskPct     decimal.Decimal // Risk / equity × 100; zero if equity ≤ 0
	Trades      int             // orders accepted today, this one included
}

// OK reports whether the order breaks no rule.
func (r Result) OK() bool { return len(r.Violations) == 0 }

// Err returns nil when the order breaks no rule, and otherwise a
// *[RejectedError] holding the violations, which wraps
// [tradekit.ErrRejected].
func (r Result) Err() error {
	if r.OK() {
		return nil
	}
	return &RejectedError{Violations: r.Violations}
}

// RejectedError reports an order refused by one or more guardrails. It
// wraps [tradekit.ErrRejected].
type RejectedError struct {
	Violations []Violation // at least one
}

// Error names the first broken rule and says why it fails, as in
// "brokers: order rejected by maxDailyTrades: this would be order 26 today
// (UTC), over the limit of 25 (and 1 more rule)".
func (e *RejectedError) Error() string {
	if len(e.Violations) == 0 {
		return "brokers: order rejected"
	}
	v := e.Violations[0]
	s := "brokers: order rejected by " + v.Rule + ": " + v.Message
	switch n := len(e.Violations) - 1; n {
	case 0:
	case 1:
		s += " (and 1 more rule)"
	default:
		s += " (and " + strconv.Itoa(n) + " more rules)"
	}
	return s
}

// Unwrap returns [tradekit.ErrRejected].
func (e *RejectedError) Unwrap() error { return tradekit.ErrRejected }

// UTCDay returns midnight UTC of t's day in UTC: the start of the day
// whose accepted orders count towards maxDailyTrades.
func UTCDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Check evaluates every guardrail of g against order o in context c,
// with the formulas of the package documentation, counting the open
// orders of c.Open at their worst, and returns each rule's evaluation;
// [Result.Err] turns the violations into an error.
// Check is pure: it reads no clock, no database and no global setting.
//
// Check returns an error, and no Result, when o is malformed: whatever
// [Order.Validate] returns, or a *[tradekit.ParamError] for
// "stopLossPrice" when the stop is not below the execution price of a buy
// or not above that of a sell. It also returns an error wrapping
// [tradekit.ErrInvalid] when o is a market order and c.Price is not
// positive. Both errors wrap [tradekit.ErrInvalid], never
// [tradekit.ErrRejected].
func Check(o Order, g Guardrails, c Context) (Result, error) {
	if err := o.Validate(); err != nil {
		return Result{}, err
	}
	price := c.Price
	if o.Type == Limit {
		price = *o.LimitPrice
	} else if price.Sign() <= 0 {
		return Result{}, fmt.Errorf("brokers: the latest price of %s is %s, not positive: %w",
			tradekit.Quote(o.Symbol), price, tradekit.ErrInvalid)
	}
	if s := o.StopLossPrice; s != nil {
		if o.Side == Buy && s.Cmp(price) >= 0 {
			return Result{}, &tradekit.ParamError{Param: "stopLossPrice",
				Msg: "must be below the buy's price " + price.String() + ", not " + s.String()}
		}
		if o.Side == Sell && s.Cmp(price) <= 0 {
			return Result{}, &tradekit.ParamError{Param: "stopLossPrice",
				Msg: "must be above the sell's price " + price.String() + ", not " + s.String()}
		}
	}

	s := checking{o: o, g: g, c: c, q: o.Quantity, held: -1, equityOK: c.Equity.Sign() > 0}
	if o.Side == Sell {
		s.q = s.q.Neg()
	}
	for i := range c.Positions {
		if c.Positions[i].Symbol == o.Symbol {
			s.held = i
			break
		}
	}
	if s.held >= 0 {
		s.h = c.Positions[s.held]
	}
	s.r = Result{
		Rules:    make([]RuleCheck, 0, len(rules)),
		Price:    price,
		Notional: o.Quantity.Mul(price),
		Position: s.h.Quantity.Add(s.q),
		Trades:   c.TradesToday + 1,
	}
	for _, rule := range rules {
		s.r.add(rule(&s))
	}
	return s.r, nil
}

// checking is one run of [Check]: its arguments, what every rule reads
// of them, and the Result the rules fill in.
type checking struct {
	o        Order
	g        Guardrails
	c        Context
	q        decimal.Decimal // the order's signed quantity: negative for a sell
	held     int             // the index in c.Positions of the position in o.Symbol, -1 if none
	h        Held            // the position in o.Symbol, zero if none
	equityOK bool            // c.Equity is positive
	r        Result
}

// rules are the rules [Check] evaluates, in the order of
// [Result.Rules]. Each returns its evaluation and may set the figures of
// s.r behind it; none reads a figure a later rule sets.
var rules = [...]func(s *checking) RuleCheck{
	maxDailyTradesRule,
	maxPositionSizeRule,
	maxPortfolioRiskRule,
	stopLossRequiredRule,
	allowedAssetTypesRule,
	heldQuantityCheck,
}

// maxDailyTradesRule evaluates [RuleMaxDailyTrades]: the order's number
// among today's, against the limit.
func maxDailyTradesRule(s *checking) RuleCheck {
	g, r := &s.g, &s.r
	rc := RuleCheck{Rule: RuleMaxDailyTrades, Limit: decimal.NewFromInt(int64(g.MaxDailyTrades)),
		Actual: decimal.NewFromInt(int64(r.Trades))}
	rc.OK = g.MaxDailyTrades == 0 || r.Trades <= g.MaxDailyTrades
	if !rc.OK {
		rc.Message = fmt.Sprintf("this would be order %d today (UTC), over the limit of %d", r.Trades, g.MaxDailyTrades)
	}
	return rc
}

// maxPositionSizeRule evaluates [RuleMaxPositionSizePct] on the
// worst-case position in the order's symbol, and sets r.Exposure and
// r.PositionPct.
func maxPositionSizeRule(s *checking) RuleCheck {
	o, g, c, r := &s.o, &s.g, &s.c, &s.r
	w, sameSide := s.h.Quantity, 0 // the worst-case position before the order, and the open orders it counts
	for i := range c.Open {
		if v := &c.Open[i]; v.Symbol == o.Symbol && v.Quantity.Sign() == s.q.Sign() {
			w = w.Add(v.Quantity)
			sameSide++
		}
	}
	r.Exposure = w.Add(s.q)
	after := r.Exposure.Abs()
	value := after.Mul(r.Price).Shift(2) // 100 × |worst-case position after| × price
	if s.equityOK {
		r.PositionPct = value.DivRound(c.Equity, PctPlaces)
	}
	rc := RuleCheck{Rule: RuleMaxPositionSizePct, Limit: g.MaxPositionSizePct, Actual: r.PositionPct}
	rc.OK = g.MaxPositionSizePct.IsZero() ||
		after.Cmp(w.Abs()) <= 0 || // the order does not grow the worst-case position
		s.equityOK && value.Cmp(g.MaxPositionSizePct.Mul(c.Equity)) <= 0
	if !rc.OK {
		if s.equityOK {
			rc.Message = fmt.Sprintf("the %s position%s would be %s%% of equity, over the limit of %s%%",
				o.Symbol, withOpen(sameSide, o.Side), r.PositionPct.StringFixed(2), g.MaxPositionSizePct)
		} else {
			rc.Message = fmt.Sprintf("equity is %s, so no position fits a percent-of-equity limit", c.Equity)
		}
	}
	return rc
}

// maxPortfolioRiskRule evaluates [RuleMaxPortfolioRiskPct] on the risk
// of the positions and of the open orders that grow one, and sets r.Risk
// and r.RiskPct.
func maxPortfolioRiskRule(s *checking) RuleCheck {
	o, g, c, r, h := &s.o, &s.g, &s.c, &s.r, &s.h
	var others decimal.Decimal // the risk of the positions in other symbols and of the open orders
	for i := range c.Positions {
		if i != s.held {
			p := &c.Positions[i]
			others = others.Add(risk(p.Quantity, p.Price, p.StopLossPrice, p.ATR))
		}
	}
	growing := 0 // the open orders that grow a position, whose risk counts
	for i := range c.Open {
		v := &c.Open[i]
		sv, sh := v.Quantity.Sign(), heldQuantity(c.Positions, v.Symbol).Sign()
		if sv != 0 && (sh == 0 || sh == sv) {
			others = others.Add(risk(v.Quantity, v.Price, v.StopLossPrice, v.ATR))
			growing++
		}
	}
	rest, open := h.Quantity, s.q // what stays of the held position, what the order opens
	if h.Quantity.Sign() != 0 && h.Quantity.Sign() != s.q.Sign() {
		// The order reduces the position, and may turn it around.
		if r.Position.Sign() == h.Quantity.Sign() {
			rest, open = r.Position, decimal.Decimal{}
		} else {
			rest, open = decimal.Decimal{}, r.Position
		}
	}
	before := others.Add(risk(h.Quantity, h.Price, h.StopLossPrice, h.ATR))
	r.Risk = others.Add(risk(rest, h.Price, h.StopLossPrice, h.ATR)).Add(risk(open, r.Price, o.StopLossPrice, c.ATR))
	riskValue := r.Risk.Shift(2) // 100 × risk
	if s.equityOK {
		r.RiskPct = riskValue.DivRound(c.Equity, PctPlaces)
	}
	rc := RuleCheck{Rule: RuleMaxPortfolioRiskPct, Limit: g.MaxPortfolioRiskPct, Actual: r.RiskPct}
	rc.OK = g.MaxPortfolioRiskPct.IsZero() ||
		r.Risk.Cmp(before) <= 0 || // the order does not add risk
		s.equityOK && riskValue.Cmp(g.MaxPortfolioRiskPct.Mul(c.Equity)) <= 0
	if !rc.OK {
		if s.equityOK {
			rc.Message = fmt.Sprintf("the portfolio's risk%s would be %s%% of equity, over the limit of %s%%",
				withOpen(growing, ""), r.RiskPct.StringFixed(2), g.MaxPortfolioRiskPct)
		} else {
			rc.Message = fmt.Sprintf("equity is %s, so no risk fits a percent-of-equity limit", c.Equity)
		}
	}
	return rc
}

// stopLossRequiredRule evaluates [RuleStopLossRequired]: a buy must carry
// a stop-loss price when the guardrails require one.
func stopLossRequiredRule(s *checking) RuleCheck {
	rc := RuleCheck{Rule: RuleStopLossRequired, OK: true}
	if s.g.StopLossRequired && s.o.Side == Buy {
		rc.Limit = one
	}
	if s.o.StopLossPrice != nil {
		rc.Actual = one
	}
	if rc.Actual.Cmp(rc.Limit) < 0 {
		rc.OK = false
		rc.Message = "a buy must carry a stopLossPrice below its price"
	}
	return rc
}

// allowedAssetTypesRule evaluates [RuleAllowedAssetTypes]: the order's
// asset type must be among the allowed ones.
func allowedAssetTypesRule(s *checking) RuleCheck {
	rc := RuleCheck{Rule: RuleAllowedAssetTypes, Limit: one, OK: slices.Contains(s.g.AllowedAssetTypes, s.o.AssetType)}
	if rc.OK {
		rc.Actual = one
	} else {
		rc.Message = fmt.Sprintf("asset type %s is not among the allowed types: %s", tradekit.Quote(s.o.AssetType), typeList(s.g.AllowedAssetTypes))
	}
	return rc
}

// heldQuantityCheck evaluates [RuleHeldQuantity] with [heldQuantityRule].
func heldQuantityCheck(s *checking) RuleCheck {
	return heldQuantityRule(s.o, s.h.Quantity, s.c)
}

// heldQuantityRule evaluates [RuleHeldQuantity] for order o, with held
// the quantity held in its symbol.
func heldQuantityRule(o Order, held decimal.Decimal, c Context) RuleCheck {
	rc := RuleCheck{Rule: RuleHeldQuantity, OK: true}
	if o.Side != Sell {
		return rc // limit and actual zero: a buy sells nothing
	}
	rc.Actual = o.Quantity
	offered := decimal.Zero // by the open sells in the symbol
	for i := range c.Open {
		if v := &c.Open[i]; v.Symbol == o.Symbol && v.Quantity.IsNegative() {
			offered = offered.Sub(v.Quantity)
		}
	}
	rc.Limit = decimal.Max(decimal.Zero, held.Sub(offered))
	if c.CanShort || o.Quantity.Cmp(rc.Limit) <= 0 {
		return rc
	}
	rc.OK = false
	rc.Message = fmt.Sprintf("a sell of %s %s is more than the %s held", o.Quantity, o.Symbol, decimal.Max(decimal.Zero, held))
	if offered.IsPositive() {
		rc.Message += fmt.Sprintf(" (%s of them offered by open sells)", offered)
	}
	rc.Message += ": this account cannot sell short"
	return rc
}

// add appends rc to r.Rules, and to r.Violations if it fails.
func (r *Result) add(rc RuleCheck) {
	r.Rules = append(r.Rules, rc)
	if !rc.OK {
		if r.Violations == nil {
			r.Violations = make([]Violation, 0, 5)
		}
		r.Violations = append(r.Violations, Violation{Rule: rc.Rule, Limit: rc.Limit, Actual: rc.Actual, Message: rc.Message})
	}
}

// heldQuantity returns the quantity held in symbol, zero if none.
func heldQuantity(ps []Held, symbol string) decimal.Decimal {
	for i := range ps {
		if ps[i].Symbol == symbol {
			return ps[i].Quantity
		}
	}
	return decimal.Decimal{}
}

// withOpen returns how a message names the n open orders of side (or of
// either side when side is empty) that it counts: "" when n is 0, else
// e.g. " with its open buy" or " with its 3 open orders".
func withOpen(n int, side Side) string {
	what := "order"
	if side != "" {
		what = string(side)
	}
	switch n {
	case 0:
		return ""
	case 1:
		return " with its open " + what
	}
	return " with its " + strconv.Itoa(n) + " open " + what + "s"
}

// typeList lists asset types for a message as a person reads them:
// "stock, etf"; "none" for an empty list.
func typeList(types []string) string {
	if len(types) == 0 {
		return "none"
	}
	return strings.Join(types, ", ")
}
