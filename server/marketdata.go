package server

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/jsonnum"
	"github.com/tradekit/tradekit/marketdata"
)

// assetJSON is an Asset as the API shows it. ExchangeID and IsActive are
// nil where the spec leaves them out: both in an industry's asset list,
// exchangeId in an index's.
type assetJSON struct {
	ID         string  `json:"id"`
	Symbol     string  `json:"symbol"`
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	ExchangeID *string `json:"exchangeId,omitempty"`
	Currency   string  `json:"currency"`
	IsActive   *bool   `json:"isActive,omitempty"`
}

// assetFields selects the optional fields of assetJSON.
type assetFields struct{ exchangeID, isActive bool }

func newAssetJSON(a marketdata.Asset, f assetFields) assetJSON {
	out := assetJSON{ID: a.ID.String(), Symbol: a.Symbol, Name: a.Name, Type: string(a.Type), Currency: a.Currency}
	if f.exchangeID {
		id := a.ExchangeID.String()
		out.ExchangeID = &id
	}
	if f.isActive {
		active := a.IsActive
		out.IsActive = &active
	}
	return out
}

func newAssetList(as []marketdata.Asset, f assetFields) []assetJSON {
	out := make([]assetJSON, len(as))
	for i, a := range as {
		out[i] = newAssetJSON(a, f)
	}
	return out
}

type profileJSON struct {
	AssetID     string `json:"assetId"`
	Description string `json:"description"`
	Sector      string `json:"sector"`
	Industry    string `json:"industry"`
	MarketCap   number `json:"marketCap"`
	Website     string `json:"website"`
	LogoURL     string `json:"logoUrl"`
}

type fundamentalsJSON struct {
	AssetID       string    `json:"assetId"`
	PERatio       number    `json:"peRatio"`
	EPS           number    `json:"eps"`
	Revenue       number    `json:"revenue"`
	MarketCap     number    `json:"marketCap"`
	DividendYield number    `json:"dividendYield"`
	Beta          number    `json:"beta"`
	UpdatedAt     timestamp `json:"updatedAt"`
}

// industryJSON is an Industry; parentId is null for a sector.
type industryJSON struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Level      string  `json:"level"`
	ParentID   *string `json:"parentId"`
	AssetCount int     `json:"assetCount"`
}

func newIndustryJSON(n marketdata.Industry) industryJSON {
	out := industryJSON{ID: n.ID.String(), Name: n.Name, Level: string(n.Level), AssetCount: n.AssetCount}
	if n.ParentID != nil {
		p := n.ParentID.String()
		out.ParentID = &p
	}
	return out
}

func newIndustryList(ns []marketdata.Industry) []industryJSON {
	out := make([]industryJSON, len(ns))
	for i, n := range ns {
		out[i] = newIndustryJSON(n)
	}
	return out
}

// indexJSON is an Index; assetCount is absent from the lookup by symbol.
type indexJSON struct {
	ID          string `json:"id"`
	Symbol      string `json:"symbol"`
	Name        string `json:"name"`
	Description string `json:"description"`
	AssetCount  *int   `json:"assetCount,omitempty"`
}

func newIndexJSON(x marketdata.Index, withCount bool) indexJSON {
	out := indexJSON{ID: x.ID.String(), Symbol: x.Symbol, Name: x.Name, Description: x.Description}
	if withCount {
		n := x.AssetCount
		out.AssetCount = &n
	}
	return out
}

type priceJSON struct {
	ID      string        `json:"id"`
	AssetID string        `json:"assetId"`
	Date    calendar.Date `json:"date"`
	Open    number        `json:"open"`
	High    number        `json:"high"`
	Low     number        `json:"low"`
	Close   number        `json:"close"`
	Volume  int64         `json:"volume"`
}

func newPriceJSON(p marketdata.Price) priceJSON {
	return priceJSON{
		ID: p.ID.String(), AssetID: p.AssetID.String(), Date: p.Date,
		Open: number(p.Open), High: number(p.High), Low: number(p.Low), Close: number(p.Close), Volume: p.Volume,
	}
}

// exchangeJSON is an Exchange as the API shows it. Country and MIC are null
// where the venue has none (the CRYPTO venue has neither), never "".
type exchangeJSON struct {
	ID        string  `json:"id"`
	Symbol    string  `json:"symbol"`
	Name      string  `json:"name"`
	TimeZone  string  `json:"timezone"`
	Country   *string `json:"country"`
	Currency  string  `json:"currency"`
	MIC       *string `json:"mic"`
	OpenTime  string  `json:"openTime"`
	CloseTime string  `json:"closeTime"`
}

func newExchangeJSON(e marketdata.Exchange) exchangeJSON {
	return exchangeJSON{
		ID: e.ID.String(), Symbol: e.Symbol, Name: e.Name, TimeZone: e.TimeZone, Country: nullIfEmpty(e.Country),
		Currency: e.Currency, MIC: nullIfEmpty(e.MIC), OpenTime: e.OpenTime, CloseTime: e.CloseTime,
	}
}

// nullIfEmpty returns nil for "", so that an absent value is JSON null,
// and a pointer to s otherwise.
func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type holidayJSON struct {
	ID         string        `json:"id"`
	ExchangeID string        `json:"exchangeId"`
	Date       calendar.Date `json:"date"`
	Name       string        `json:"name"`
	Type       string        `json:"type"`
	CloseTime  string        `json:"closeTime,omitempty"`
}

// today returns the server clock's date in UTC.
func (s *Server) today() calendar.Date {
	return calendar.DateOf(s.now().UTC())
}

// ---- 4.1 assets ----

// maxAssetQuery bounds the length, in characters, of the q parameter of
// GET /api/v1/market-data/assets: no symbol or name is longer.
const maxAssetQuery = 100

// assetListParams are the optional filters of GET
// /api/v1/market-data/assets (CONTRACT, additions of 2026-11-29); without
// any, the list holds every asset, as the spec says.
type assetListParams struct {
	Type     marketdata.AssetType `query:"type" validate:"omitempty,oneof=stock etf fx crypto commodity"`
	Exchange string               `query:"exchange" hint:"an exchange's symbol such as NYSE, or its id"`
	Q        string               `query:"q" hint:"the start of a symbol or a name, such as hel"`
}

// check bounds q.
func (p *assetListParams) check() error {
	if n := utf8.RuneCountInString(p.Q); n > maxAssetQuery {
		return invalidParam("q", "is %d characters long; at most %d are allowed", n, maxAssetQuery)
	}
	return nil
}

// handleAssetList serves GET /api/v1/market-data/assets?type=&exchange=&q=.
// An exchange is named by its symbol (any case) or its id; one that does
// not exist is a 400 naming exchange.
func (s *Server) handleAssetList(w http.ResponseWriter, req bunrouter.Request, p *assetListParams) error {
	ctx := req.Context()
	if *p == (assetListParams{}) {
		return s.handleFullAssetList(w, req)
	}
	f := marketdata.AssetFilter{Type: p.Type, Prefix: p.Q}
	if p.Exchange != "" {
		e, err := s.exchangeByRef(ctx, p.Exchange)
		if err != nil {
			return err
		}
		f.ExchangeID = &e.ID
	}
	as, err := s.market.FindAssets(ctx, f)
	if err != nil {
		return err
	}
	return s.writeData(w, newAssetList(as, assetFields{exchangeID: true, isActive: true}))
}

// handleFullAssetList answers GET /api/v1/market-data/assets without
// filters, the full list the spec describes, from its encoding, cached
// per asset list version.
func (s *Server) handleFullAssetList(w http.ResponseWriter, req bunrouter.Request) error {
	data, version, err := s.market.EncodedAssets(req.Context(), encodeAssetList)
	if err != nil {
		return err
	}
	return s.writeAssetList(w, req, data, version)
}

// exchangeByRef returns the exchange that ref names, by id or by symbol;
// an unknown one is a 400 naming exchange.
func (s *Server) exchangeByRef(ctx context.Context, ref string) (marketdata.Exchange, error) {
	var (
		e   marketdata.Exchange
		err error
	)
	if id, perr := uuid.Parse(ref); perr == nil && len(ref) == 36 {
		e, err = s.market.Exchange(ctx, id)
	} else {
		e, err = s.market.ExchangeBySymbol(ctx, ref)
	}
	if errors.Is(err, tradekit.ErrNotFound) {
		return e, invalidParam("exchange", "no exchange is named %s; GET /api/v1/market-data/exchanges lists them",
			tradekit.Quote(ref))
	}
	return e, err
}

// handleAssetGet serves GET /api/v1/market-data/assets/:id.
func (s *Server) handleAssetGet(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	a, err := s.market.Asset(req.Context(), p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, newAssetJSON(a, assetFields{exchangeID: true, isActive: true}))
}

// handleAssetBySymbol serves GET /api/v1/market-data/assets/symbol/:symbol.
func (s *Server) handleAssetBySymbol(w http.ResponseWriter, req bunrouter.Request, p *symbolParams) error {
	a, err := s.market.AssetBySymbol(req.Context(), p.Symbol)
	if err != nil {
		return err
	}
	return s.writeData(w, newAssetJSON(a, assetFields{exchangeID: true, isActive: true}))
}

// handleAssetProfile serves GET /api/v1/market-data/assets/:id/profile.
func (s *Server) handleAssetProfile(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	pr, err := s.market.Profile(req.Context(), p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, profileJSON{
		AssetID: pr.AssetID.String(), Description: pr.Description, Sector: pr.Sector, Industry: pr.Industry,
		MarketCap: number(pr.MarketCap), Website: pr.Website, LogoURL: pr.LogoURL,
	})
}

// handleAssetFundamentals serves GET /api/v1/market-data/assets/:id/fundamentals.
func (s *Server) handleAssetFundamentals(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	f, err := s.market.Fundamentals(req.Context(), p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, fundamentalsJSON{
		AssetID: f.AssetID.String(), PERatio: number(f.PERatio), EPS: number(f.EPS), Revenue: number(f.Revenue),
		MarketCap: number(f.MarketCap), DividendYield: number(f.DividendYield), Beta: number(f.Beta),
		UpdatedAt: timestamp(f.UpdatedAt),
	})
}

// ---- 4.2 industries ----

// industryListParams are the parameters of GET /api/v1/market-data/industries.
type industryListParams struct {
	Level marketdata.Level `query:"level" validate:"omitempty,oneof=sector industry_group industry"`
}

// handleIndustryList serves GET /api/v1/market-data/industries?level=.
func (s *Server) handleIndustryList(w http.ResponseWriter, req bunrouter.Request, p *industryListParams) error {
	ns, err := s.market.Industries(req.Context(), p.Level)
	if err != nil {
		return err
	}
	return s.writeData(w, newIndustryList(ns))
}

// handleIndustryGet serves GET /api/v1/market-data/industries/:id.
func (s *Server) handleIndustryGet(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	n, err := s.market.Industry(req.Context(), p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, newIndustryJSON(n))
}

// handleIndustryChildren serves GET /api/v1/market-data/industries/:id/children.
func (s *Server) handleIndustryChildren(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	ns, err := s.market.IndustryChildren(req.Context(), p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, newIndustryList(ns))
}

// handleIndustryAssets serves GET /api/v1/market-data/industries/:id/assets:
// the assets at the node or below it, without exchangeId and isActive.
func (s *Server) handleIndustryAssets(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	as, err := s.market.IndustryAssets(req.Context(), p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, newAssetList(as, assetFields{}))
}

// ---- 4.3 indexes ----

// handleIndexList serves GET /api/v1/market-data/indexes, with today's
// constituent counts.
func (s *Server) handleIndexList(w http.ResponseWriter, req bunrouter.Request) error {
	xs, err := s.market.Indexes(req.Context(), s.today())
	if err != nil {
		return err
	}
	out := make([]indexJSON, len(xs))
	for i, x := range xs {
		out[i] = newIndexJSON(x, true)
	}
	return s.writeData(w, out)
}

// handleIndexGet serves GET /api/v1/market-data/indexes/:id.
func (s *Server) handleIndexGet(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	x, err := s.market.Index(req.Context(), p.ID, s.today())
	if err != nil {
		return err
	}
	return s.writeData(w, newIndexJSON(x, true))
}

// handleIndexBySymbol serves GET /api/v1/market-data/indexes/symbol/:symbol,
// without assetCount as the spec says.
func (s *Server) handleIndexBySymbol(w http.ResponseWriter, req bunrouter.Request, p *symbolParams) error {
	x, err := s.market.IndexBySymbol(req.Context(), p.Symbol)
	if err != nil {
		return err
	}
	return s.writeData(w, newIndexJSON(x, false))
}

// indexAssetsParams are the parameters of GET /api/v1/market-data/indexes/:id/assets.
type indexAssetsParams struct {
	ID   uuid.UUID     `path:"id"`
	AsOf calendar.Date `query:"asOf"` // default today
}

// handleIndexAssets serves GET /api/v1/market-data/indexes/:id/assets?asOf=:
// the constituents on asOf (default today), without exchangeId.
func (s *Server) handleIndexAssets(w http.ResponseWriter, req bunrouter.Request, p *indexAssetsParams) error {
	asOf := p.AsOf
	if !asOf.IsValid() {
		asOf = s.today()
	}
	as, err := s.market.IndexAssets(req.Context(), p.ID, asOf)
	if err != nil {
		return err
	}
	return s.writeData(w, newAssetList(as, assetFields{isActive: true}))
}

// actionJSON is a corporate action as the API shows it.
type actionJSON struct {
	AssetID string        `json:"assetId"`
	Date    calendar.Date `json:"date"`
	Kind    string        `json:"kind"`
	// Ratio is a split's (4 for 4-for-1); Amount a dividend's cash per share.
	Ratio  *number `json:"ratio,omitempty"`
	Amount *number `json:"amount,omitempty"`
}

// handleAssetActions serves GET /api/v1/market-data/assets/:id/actions:
// the asset's splits and dividends, oldest first.
func (s *Server) handleAssetActions(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	acts, err := s.market.Actions(req.Context(), p.ID)
	if err != nil {
		return err
	}
	out := make([]actionJSON, len(acts))
	for i, a := range acts {
		v := number(a.Value)
		out[i] = actionJSON{AssetID: a.AssetID.String(), Date: a.Date, Kind: string(a.Kind)}
		if a.Kind == marketdata.Split {
			out[i].Ratio = &v
		} else {
			out[i].Amount = &v
		}
	}
	return s.writeData(w, out)
}

// ---- 4.4 prices ----

// priceListParams are the parameters of GET /api/v1/market-data/prices/asset/:assetId.
type priceListParams struct {
	AssetID uuid.UUID `path:"assetId"`
	dateRange
	// Adjusted asks for the series back-adjusted for splits and dividends
	// (marketdata.Adjust), served uncached.
	Adjusted bool `query:"adjusted" default:"false"`
}

// handlePriceList serves GET /api/v1/market-data/prices/asset/:assetId?from=&to=:
// the daily records in the range (both bounds included), oldest first,
// sliced from the asset's cached price document (see priceDoc).
func (s *Server) handlePriceList(w http.ResponseWriter, req bunrouter.Request, p *priceListParams) error {
	id, from, to := p.AssetID, p.From, p.To
	if p.Adjusted {
		ps, err := s.market.AdjustedPrices(req.Context(), id, from, to)
		if err != nil {
			return err
		}
		out := make([]priceJSON, len(ps))
		for i, pr := range ps {
			out[i] = newPriceJSON(pr)
		}
		return s.writeData(w, out)
	}
	doc, version, err := s.priceDoc(w, req, id, "list/"+from.String()+"/"+to.String())
	if err != nil || doc == nil {
		return err // nil doc: answered 304
	}
	if !from.IsValid() && !to.IsValid() && acceptsGzip(req.Header.Get("Accept-Encoding")) {
		// The full history, the largest answer, is gzipped once per
		// price version, not per request.
		return s.writeGzipCached(w, "gzip/prices/"+id.String(), version, func(b []byte) ([]byte, error) {
			b = append(b, `{"data":`...)
			return append(doc.appendRange(b, from, to), "}\n"...), nil
		})
	}
	return s.writeAppended(w, func(b []byte) ([]byte, error) {
		return doc.appendRange(b, from, to), nil
	})
}

// appendPrice appends p as the Price record object that newPriceJSON
// gives, without reflection.
func appendPrice(b []byte, p marketdata.Price) []byte {
	b = append(b, `{"id":"`...)
	b = appendUUID(b, p.ID)
	b = append(b, `","assetId":"`...)
	b = appendUUID(b, p.AssetID)
	b = append(b, `","date":"`...)
	b = append(b, p.Date.String()...)
	b = append(b, `","open":`...)
	b = appendDecimal(b, p.Open)
	b = append(b, `,"high":`...)
	b = appendDecimal(b, p.High)
	b = append(b, `,"low":`...)
	b = appendDecimal(b, p.Low)
	b = append(b, `,"close":`...)
	b = appendDecimal(b, p.Close)
	b = append(b, `,"volume":`...)
	b = strconv.AppendInt(b, p.Volume, 10)
	return append(b, '}')
}

// appendDecimal appends d as decimal.Decimal.String writes it, or, past
// 15 significant digits, rounded to them as every JSON number of the API
// is ([jsonnum.AppendNumber]); without allocating when its coefficient
// fits in 18 digits.
func appendDecimal(b []byte, d decimal.Decimal) []byte {
	exp := d.Exponent()
	if exp > 0 || exp < -18 || d.NumDigits() > 18 {
		return jsonnum.AppendNumber(b, d.String())
	}
	c := d.CoefficientInt64()
	for exp < 0 && c != 0 && c%10 == 0 {
		c /= 10
		exp++
	}
	if c == 0 {
		return append(b, '0')
	}
	if c < 0 {
		b = append(b, '-')
		c = -c
	}
	var buf [20]byte
	digits := strconv.AppendInt(buf[:0], c, 10)
	if len(digits) > jsonnum.Digits {
		return jsonnum.AppendNumber(b, d.String())
	}
	frac := int(-exp)
	switch {
	case frac == 0:
		return append(b, digits...)
	case len(digits) > frac:
		b = append(b, digits[:len(digits)-frac]...)
		b = append(b, '.')
		return append(b, digits[len(digits)-frac:]...)
	default:
		b = append(b, '0', '.')
		for i := len(digits); i < frac; i++ {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
}

// appendUUID appends the canonical text form of id.
func appendUUID(b []byte, id uuid.UUID) []byte {
	var buf [36]byte
	hex.Encode(buf[0:8], id[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], id[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], id[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], id[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:], id[10:])
	return append(b, buf[:]...)
}

// handlePriceLatest serves GET /api/v1/market-data/prices/asset/:assetId/latest,
// the last record of the asset's cached price document.
func (s *Server) handlePriceLatest(w http.ResponseWriter, req bunrouter.Request, p *assetIDParams) error {
	id := p.AssetID
	doc, _, err := s.priceDoc(w, req, id, "latest")
	if err != nil || doc == nil {
		return err
	}
	last, ok := doc.latest()
	if !ok {
		return fmt.Errorf("server: %w", tradekit.Errorf(tradekit.ErrNotFound, "asset %s has no prices", id))
	}
	return s.writeRawData(w, last)
}

// handlePriceGet serves GET /api/v1/market-data/prices/:id: the record of
// the asset's cached price document on the date the id names.
func (s *Server) handlePriceGet(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	assetID, date, err := s.market.PriceLocation(req.Context(), p.ID)
	if err != nil {
		return err
	}
	doc, _, err := s.priceDoc(w, req, assetID, "day/"+date.String())
	if err != nil || doc == nil {
		return err
	}
	rec, ok := doc.on(date)
	if !ok {
		return fmt.Errorf("server: %w", tradekit.Errorf(tradekit.ErrNotFound, "price %s not found", p.ID))
	}
	return s.writeRawData(w, rec)
}

// ---- 4.5 exchanges ----

// handleExchangeList serves GET /api/v1/market-data/exchanges.
func (s *Server) handleExchangeList(w http.ResponseWriter, req bunrouter.Request) error {
	es, err := s.market.Exchanges(req.Context())
	if err != nil {
		return err
	}
	out := make([]exchangeJSON, len(es))
	for i, e := range es {
		out[i] = newExchangeJSON(e)
	}
	return s.writeData(w, out)
}

// handleExchangeGet serves GET /api/v1/market-data/exchanges/:id.
func (s *Server) handleExchangeGet(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	e, err := s.market.Exchange(req.Context(), p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, newExchangeJSON(e))
}

// handleExchangeBySymbol serves GET /api/v1/market-data/exchanges/symbol/:symbol.
func (s *Server) handleExchangeBySymbol(w http.ResponseWriter, req bunrouter.Request, p *symbolParams) error {
	e, err := s.market.ExchangeBySymbol(req.Context(), p.Symbol)
	if err != nil {
		return err
	}
	return s.writeData(w, newExchangeJSON(e))
}

// holidayListParams are the parameters of GET /api/v1/market-data/exchanges/:id/holidays.
type holidayListParams struct {
	ID   uuid.UUID                `path:"id"`
	Year *int                     `query:"year" validate:"omitnil,min=1990,max=2100"` // calendar.MinYear, calendar.MaxYear
	Type marketdata.HolidayFilter `query:"type" default:"closed" validate:"oneof=closed early_close all"`
}

// handleExchangeHolidays serves GET /api/v1/market-data/exchanges/:id/holidays?year=&type=:
// the full-day closures of year (default: this year and the next);
// type=early_close gives the early closes instead and type=all both.
func (s *Server) handleExchangeHolidays(w http.ResponseWriter, req bunrouter.Request, p *holidayListParams) error {
	e, err := s.market.Exchange(req.Context(), p.ID)
	if err != nil {
		return err
	}
	var years []int
	if p.Year != nil {
		years = []int{*p.Year}
	} else {
		y := s.today().Year
		years = []int{y, y + 1}
		if y >= calendar.MaxYear {
			years = []int{calendar.MaxYear}
		}
	}
	hs, err := marketdata.Holidays(e, p.Type, years...)
	if err != nil {
		return err
	}
	out := make([]holidayJSON, len(hs))
	for i, h := range hs {
		out[i] = holidayJSON{
			ID: h.ID.String(), ExchangeID: h.ExchangeID.String(), Date: h.Date, Name: h.Name,
			Type: string(h.Type), CloseTime: h.Close,
		}
	}
	return s.writeData(w, out)
}
