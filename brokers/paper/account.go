package paper

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/alpaca"
)

// configurations are every paper account's configurations, fixed: a cash
// account that cannot short and trades fractions, with no day-trading
// buying power check and no confirmation e-mails.
var configurations = alpaca.AccountConfigurationsJSON{
	DtbpCheck: "entry", TradeConfirmEmail: "none", NoShorting: true, FractionalTrading: true,
	MaxMarginMultiplier: decimal.New(1, 0), PDTCheck: "entry",
}

// handleConfigurations answers GET /v2/account/configurations.
func (b *Broker) handleConfigurations(w http.ResponseWriter, r *http.Request, _ account) error {
	return writeJSON(w, http.StatusOK, configurations)
}

// configurationsPatch is the body of PATCH /v2/account/configurations:
// each field absent or null keeps its value.
type configurationsPatch struct {
	DtbpCheck           *string          `json:"dtbp_check"`
	TradeConfirmEmail   *string          `json:"trade_confirm_email"`
	SuspendTrade        *bool            `json:"suspend_trade"`
	NoShorting          *bool            `json:"no_shorting"`
	FractionalTrading   *bool            `json:"fractional_trading"`
	MaxMarginMultiplier *decimal.Decimal `json:"max_margin_multiplier"`
	PDTCheck            *string          `json:"pdt_check"`
}

// handleConfigurationsUpdate answers PATCH /v2/account/configurations:
// the configurations are fixed, so a body that sets each field to its
// value (or leaves it out, or sends "" for a string) answers them, and
// one that would change a field answers 422.
func (b *Broker) handleConfigurationsUpdate(w http.ResponseWriter, r *http.Request, _ account) error {
	var p configurationsPatch
	if err := decodeJSON(r.Body, &p, "account configurations"); err != nil {
		return err
	}
	c := configurations
	str := func(name string, got *string, want string) error {
		if got != nil && *got != "" && *got != want {
			return notSimulated("%s %s (it is %s)", name, tradekit.Quote(*got), want)
		}
		return nil
	}
	flag := func(name string, got *bool, want bool) error {
		if got != nil && *got != want {
			return notSimulated("%s %t (it is %t)", name, *got, want)
		}
		return nil
	}
	for _, err := range []error{
		str("dtbp_check", p.DtbpCheck, c.DtbpCheck), str("trade_confirm_email", p.TradeConfirmEmail, c.TradeConfirmEmail),
		str("pdt_check", p.PDTCheck, c.PDTCheck), flag("suspend_trade", p.SuspendTrade, c.SuspendTrade),
		flag("no_shorting", p.NoShorting, c.NoShorting), flag("fractional_trading", p.FractionalTrading, c.FractionalTrading),
	} {
		if err != nil {
			return err
		}
	}
	if p.MaxMarginMultiplier != nil && !p.MaxMarginMultiplier.Equal(c.MaxMarginMultiplier) {
		return notSimulated("max_margin_multiplier %s (margin)", tradekit.Quote(p.MaxMarginMultiplier.String()))
	}
	return writeJSON(w, http.StatusOK, c)
}

// activityTypes are Alpaca's account activity types. The paper broker
// records trades (FILL) only: the others list nothing.
var activityTypes = []string{"FILL", "TRANS", "MISC", "ACATC", "ACATS", "CFEE", "CSD", "CSW", "DIV", "DIVCGL", "DIVCGS",
	"DIVFEE", "DIVFT", "DIVNRA", "DIVROC", "DIVTW", "DIVTXEX", "FEE", "INT", "INTNRA", "INTTW", "JNL", "JNLC", "JNLS",
	"MA", "NC", "OPASN", "OPCA", "OPCSH", "OPEXC", "OPEXP", "OPTRD", "PTC", "PTR", "REORG", "SPIN", "SPLIT"}

// The page sizes of GET /v2/account/activities, Alpaca's.
const (
	defaultActivityPage = 100
	maxActivityPage     = 100
)

// activityID returns a fill's activity id, Alpaca's form: the fill time
// to the millisecond, "::" and the order id. Ids sort as the fills did.
func activityID(o order) string {
	t := o.FilledAt.UTC()
	return fmt.Sprintf("%s%03d::%s", t.Format("20060102150405"), t.Nanosecond()/int(time.Millisecond), o.ID)
}

// handleActivities answers GET /v2/account/activities and
// /v2/account/activities/{type}: the account's fills, as FILL activities
// (one per filled order: the paper broker fills orders whole), newest
// first unless direction is asc. Parameters: activity_types (a
// comma-separated list), date (one UTC day), after and until (exclusive
// transaction times), page_size (100, at most 100) and page_token (the
// id of the last activity of the previous page).
func (b *Broker) handleActivities(w http.ResponseWriter, r *http.Request, a account) error {
	q := r.URL.Query()
	types := []string{}
	if t := r.PathValue("type"); t != "" {
		types = append(types, t)
	} else if s := q.Get("activity_types"); s != "" {
		types = strings.Split(s, ",")
	}
	fills := len(types) == 0
	for _, t := range types {
		t = strings.ToUpper(strings.TrimSpace(t))
		if !slices.Contains(activityTypes, t) {
			return &tradekit.ParamError{Param: "activity_types", Msg: "must be Alpaca's activity types, such as FILL"}
		}
		fills = fills || t == "FILL"
	}
	asc := false
	switch q.Get("direction") {
	case "", "desc":
	case "asc":
		asc = true
	default:
		return &tradekit.ParamError{Param: "direction", Msg: "must be asc or desc"}
	}
	size := defaultActivityPage
	if s := q.Get("page_size"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return &tradekit.ParamError{Param: "page_size", Msg: "must be a positive integer"}
		}
		size = min(n, maxActivityPage)
	}
	after, err := parseTime("after", q.Get("after"))
	if err != nil {
		return err
	}
	until, err := parseTime("until", q.Get("until"))
	if err != nil {
		return err
	}
	if s := q.Get("date"); s != "" {
		day, err := parseDay("date", s)
		if err != nil {
			return err
		}
		after, until = day.Time(time.UTC).Add(-time.Nanosecond), day.AddDays(1).Time(time.UTC)
	}
	token := q.Get("page_token")
	out := []alpaca.ActivityJSON{}
	if !fills {
		return writeJSON(w, http.StatusOK, out)
	}
	list, err := filledOrders(r.Context(), b.db, a.ID)
	if err != nil {
		return err
	}
	if !asc {
		slices.Reverse(list)
	}
	for _, o := range list {
		if o.FilledAt == nil || o.FilledAvgPrice == nil {
			continue
		}
		id := activityID(o)
		switch {
		case !after.IsZero() && !o.FilledAt.After(after), !until.IsZero() && !o.FilledAt.Before(until):
			continue
		case token != "" && (asc && id <= token || !asc && id >= token):
			continue
		}
		out = append(out, alpaca.ActivityJSON{
			ID: id, ActivityType: "FILL", TransactionTime: o.FilledAt.UTC(), Type: "fill",
			Price: *o.FilledAvgPrice, Qty: o.FilledQty, Side: o.Side, Symbol: o.Symbol,
			LeavesQty: decimal.Zero, CumQty: o.FilledQty, OrderID: o.ID.String(), OrderStatus: o.Status,
		})
		if len(out) == size {
			break
		}
	}
	return writeJSON(w, http.StatusOK, out)
}
