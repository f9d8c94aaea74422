package server

// The hand-written parameter readers of the routes not bound yet.
// TODO(i25): gone once every route is bound.

import (
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/marketdata/calendar"
)

// pathUUID returns the path parameter name as a UUID, or a 400 naming it.
func pathUUID(req bunrouter.Request, name string) (uuid.UUID, error) {
	s := pathParam(req, name)
	id, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		return uuid.Nil, invalidParam(name, "must be a UUID such as 3f0e8a52-5d0c-4a58-9d3e-0b7f1c2d4e5a, got %s", tradekit.Quote(s))
	}
	return id, nil
}

// queryDate returns the query parameter name as a date, def when absent,
// or a 400 naming it.
func queryDate(req bunrouter.Request, name string, def calendar.Date) (calendar.Date, error) {
	s := req.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		return calendar.Date{}, invalidParam(name, "must be a date YYYY-MM-DD, got %s", tradekit.Quote(s))
	}
	return calendar.DateOf(t), nil
}

// queryDateRange returns the from and to query parameters (inclusive),
// zero when absent, refusing from after to.
func queryDateRange(req bunrouter.Request) (from, to calendar.Date, err error) {
	if from, err = queryDate(req, "from", calendar.Date{}); err != nil {
		return
	}
	if to, err = queryDate(req, "to", calendar.Date{}); err != nil {
		return
	}
	if from.IsValid() && to.IsValid() && from.After(to) {
		return calendar.Date{}, calendar.Date{}, invalidParam("from", "must not be after to (%s > %s)", from, to)
	}
	return from, to, nil
}

// queryBool returns the query parameter name as a boolean, def when absent.
func queryBool(req bunrouter.Request, name string, def bool) (bool, error) {
	s := req.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	switch strings.ToLower(s) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, invalidParam(name, "must be true or false, got %s", tradekit.Quote(s))
}

// queryInt returns the query parameter name as an integer within
// [min, max], def when absent.
func queryInt(req bunrouter.Request, name string, def, min, max int) (int, error) {
	s := req.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < min || n > max {
		return 0, invalidParam(name, "must be an integer from %d to %d, got %s", min, max, tradekit.Quote(s))
	}
	return n, nil
}

// queryUUID returns the required query parameter name as a UUID.
func queryUUID(req bunrouter.Request, name string) (uuid.UUID, error) {
	v := req.URL.Query().Get(name)
	if v == "" {
		return uuid.Nil, invalidParam(name, "is required")
	}
	id, err := uuid.Parse(v)
	if err != nil || len(v) != 36 {
		return uuid.Nil, invalidParam(name, "must be a UUID, got %s", tradekit.Quote(v))
	}
	return id, nil
}
