package studies

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tradekit/tradekit"
)

// The indicator kinds the API serves (docs/conventions.md, "Indicator
// parameters").
const (
	SMA  = "SMA"
	EMA  = "EMA"
	RSI  = "RSI"
	ATR  = "ATR"
	MACD = "MACD"
	BB   = "BB"
)

// Kinds lists the indicator kinds in the order the API documents them.
var Kinds = []string{SMA, EMA, RSI, MACD, BB, ATR}

// MaxPeriod is the longest window a request may ask for.
const MaxPeriod = 1000

// Spec is an indicator kind with its parameters.
type Spec struct {
	Kind   string
	Period int     // SMA, EMA, RSI, ATR, BB
	Fast   int     // MACD fastPeriod
	Slow   int     // MACD slowPeriod
	Signal int     // MACD signalPeriod
	K      float64 // BB stdDev: the bands' width in population standard deviations
}

// Default returns kind with its default parameters: period 20 for SMA, EMA
// and BB (with stdDev 2), 14 for RSI and ATR, and 12/26/9 for MACD. The
// boolean is false for an unknown kind.
func Default(kind string) (Spec, bool) {
	switch kind {
	case SMA, EMA:
		return Spec{Kind: kind, Period: 20}, true
	case RSI, ATR:
		return Spec{Kind: kind, Period: 14}, true
	case MACD:
		return Spec{Kind: kind, Fast: 12, Slow: 26, Signal: 9}, true
	case BB:
		return Spec{Kind: kind, Period: 20, K: 2}, true
	}
	return Spec{}, false
}

// ParseSpec returns the indicator kind with the parameters of params, a
// JSON object such as {"period":20}; absent keys keep their defaults, and
// empty params means all defaults. MACD's fastPeriod must be less than its
// slowPeriod. Errors are *tradekit.ParamError naming "indicator" or
// "params".
func ParseSpec(kind, params string) (Spec, error) {
	s, ok := Default(kind)
	if !ok {
		return Spec{}, &tradekit.ParamError{Param: "indicator",
			Msg: fmt.Sprintf("unknown indicator %s; want one of %s", tradekit.Quote(kind), strings.Join(Kinds, ", "))}
	}
	if strings.TrimSpace(params) == "" {
		return s, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(params), &raw); err != nil || raw == nil {
		return Spec{}, &tradekit.ParamError{Param: "params", Msg: `must be a JSON object such as {"period":20}`}
	}
	fields := s.fields()
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f, ok := fields[k]
		if !ok {
			return Spec{}, &tradekit.ParamError{Param: "params",
				Msg: fmt.Sprintf("%s takes no parameter %s; its parameters are %s", kind, tradekit.Quote(k), s.keyList())}
		}
		var v float64
		d := json.NewDecoder(bytes.NewReader(raw[k]))
		if err := d.Decode(&v); err != nil {
			return Spec{}, &tradekit.ParamError{Param: "params", Msg: fmt.Sprintf("%s must be a number", k)}
		}
		if err := f(v); err != nil {
			return Spec{}, &tradekit.ParamError{Param: "params", Msg: fmt.Sprintf("%s %s", k, err)}
		}
	}
	if s.Kind == MACD && s.Fast >= s.Slow {
		// TA-Lib swaps the two silently; a request that has them the
		// wrong way round more likely holds a mistake than a wish.
		return Spec{}, &tradekit.ParamError{Param: "params",
			Msg: fmt.Sprintf("fastPeriod (%d) must be less than slowPeriod (%d)", s.Fast, s.Slow)}
	}
	return s, nil
}

// fields returns the setters of the parameters of s's kind, by JSON key.
func (s *Spec) fields() map[string]func(float64) error {
	switch s.Kind {
	case MACD:
		return map[string]func(float64) error{
			"fastPeriod":   period(&s.Fast, 1),
			"slowPeriod":   period(&s.Slow, 1),
			"signalPeriod": period(&s.Signal, 1),
		}
	case BB:
		return map[string]func(float64) error{
			"period": period(&s.Period, 1),
			"stdDev": func(v float64) error {
				if !(v > 0 && v <= 10) {
					return fmt.Errorf("must be above 0 and at most 10, got %v", v)
				}
				s.K = v
				return nil
			},
		}
	case RSI:
		return map[string]func(float64) error{"period": period(&s.Period, 2)}
	}
	return map[string]func(float64) error{"period": period(&s.Period, 1)}
}

func (s Spec) keyList() string {
	var keys []string
	for k := range s.fields() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// period returns a setter of an integer period from min to MaxPeriod.
func period(dst *int, min int) func(float64) error {
	return func(v float64) error {
		if v != math.Trunc(v) || v < float64(min) || v > MaxPeriod {
			return fmt.Errorf("must be an integer from %d to %d, got %v", min, MaxPeriod, v)
		}
		*dst = int(v)
		return nil
	}
}

// Name is the indicator's name in summaries and overlays: SMA_20, RSI_14,
// BB_20, or MACD alone.
func (s Spec) Name() string {
	if s.Kind == MACD {
		return MACD
	}
	return s.Kind + "_" + strconv.Itoa(s.Period)
}

// ParseName parses a name as Name writes it (SMA_50), or a bare kind (SMA)
// for its defaults. The error is a *tradekit.ParamError naming param.
func ParseName(param, name string) (Spec, error) {
	kind, n, hasPeriod := strings.Cut(strings.ToUpper(strings.TrimSpace(name)), "_")
	s, ok := Default(kind)
	if !ok {
		return Spec{}, &tradekit.ParamError{Param: param,
			Msg: fmt.Sprintf("unknown indicator %s; want one of %s, optionally with a period as in SMA_50", tradekit.Quote(name), strings.Join(Kinds, ", "))}
	}
	if !hasPeriod {
		return s, nil
	}
	p, err := strconv.Atoi(n)
	min := 1
	if kind == RSI {
		min = 2
	}
	if kind == MACD || err != nil || p < min || p > MaxPeriod {
		return Spec{}, &tradekit.ParamError{Param: param,
			Msg: fmt.Sprintf("bad indicator %s: the part after _ is a period from %d to %d (MACD takes none)", tradekit.Quote(name), min, MaxPeriod)}
	}
	s.Period = p
	return s, nil
}

// Key identifies the spec, parameters included, for caches: two specs
// have the same key exactly when they compute the same series.
func (s Spec) Key() string {
	return fmt.Sprintf("%s/%d/%d/%d/%d/%g", s.Kind, s.Period, s.Fast, s.Slow, s.Signal, s.K)
}
