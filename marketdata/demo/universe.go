package demo

import (
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// sector and group are nodes of the demo industry tree.
type sector struct {
	name   string
	groups []group
}

type group struct {
	name       string
	industries []string
}

// sectorTree is the demo industry tree: sectors, their industry groups and
// the groups' industries. The names are our own, in the manner of common
// industry classifications.
var sectorTree = []sector{
	{"Technology", []group{
		{"Software & Services", []string{"Application Software", "Systems Software", "IT Services"}},
		{"Technology Hardware", []string{"Semiconductors", "Communications Equipment", "Electronic Components"}}}},
	{"Health Care", []group{
		{"Pharmaceuticals & Biotechnology", []string{"Pharmaceuticals", "Biotechnology"}},
		{"Health Care Equipment & Services", []string{"Medical Devices", "Health Care Providers"}}}},
	{"Financials", []group{
		{"Banking", []string{"Diversified Banks", "Regional Banks"}},
		{"Insurance", []string{"Property & Casualty Insurance", "Life Insurance"}},
		{"Capital Markets", []string{"Asset Management", "Exchanges & Market Data"}}}},
	{"Energy", []group{
		{"Energy Equipment & Fuels", []string{"Oil & Gas Exploration", "Integrated Oil & Gas", "Oilfield Services"}}}},
	{"Materials", []group{
		{"Chemicals", []string{"Specialty Chemicals", "Commodity Chemicals"}},
		{"Metals & Mining", []string{"Gold Mining", "Steel", "Diversified Metals"}}}},
	{"Industrials", []group{
		{"Capital Goods", []string{"Aerospace & Defence", "Industrial Machinery", "Electrical Equipment"}},
		{"Transportation", []string{"Railroads", "Air Freight & Logistics"}}}},
	{"Consumer Discretionary", []group{
		{"Automobiles & Components", []string{"Automobile Makers", "Auto Parts"}},
		{"Retailing", []string{"Online Retail", "Apparel Retail"}}}},
	{"Consumer Staples", []group{
		{"Food & Beverage", []string{"Packaged Foods", "Beverages"}},
		{"Household & Personal Products", []string{"Household Products", "Personal Care"}}}},
	{"Communication Services", []group{
		{"Media & Entertainment", []string{"Interactive Media", "Entertainment"}},
		{"Telecommunication Services", []string{"Wireless Telecom", "Fixed-Line Telecom"}}}},
	{"Utilities", []group{
		{"Utility Services", []string{"Electric Utilities", "Renewable Power", "Water Utilities"}}}},
	{"Real Estate", []group{
		{"Real Estate Investment Trusts", []string{"Commercial REITs", "Residential REITs"}}}},
}

// spec describes one demo asset and the parameters of its simulated
// prices.
type spec struct {
	symbol, name string
	typ          marketdata.AssetType
	exchange     string
	currency     string
	industry     string  // stocks only
	price        float64 // first open
	vol          float64 // long-run annualised volatility
	drift        float64 // annualised drift of the asset in a neutral regime
	rho          float64 // loading on the common market shock
	decimals     int32   // price tick, as decimal places
	shares       float64 // shares outstanding, millions (stocks)
	volume       float64 // typical daily volume
}

const (
	s  = marketdata.Stock
	et = marketdata.ETF
	fx = marketdata.FX
	cr = marketdata.Crypto
	cm = marketdata.Commodity
)

// specs is the demo universe. Every company, coin and fund is fictional;
// FX pairs and commodities carry real names but synthetic prices.
var specs = []spec{
	// NYSE
	{"HLXI", "Helix Industrial Group", s, "NYSE", "USD", "Industrial Machinery", 84.20, 0.24, 0.07, 0.60, 2, 410, 2.1e6},
	{"BRKN", "Brookline National Bank", s, "NYSE", "USD", "Diversified Banks", 41.50, 0.27, 0.06, 0.65, 2, 1900, 8.4e6},
	{"ORPH", "Orpheus Pharmaceuticals", s, "NYSE", "USD", "Pharmaceuticals", 62.75, 0.22, 0.05, 0.45, 2, 2300, 6.2e6},
	{"CSTL", "Coastal Energy Partners", s, "NYSE", "USD", "Integrated Oil & Gas", 58.10, 0.31, 0.04, 0.55, 2, 1600, 7.5e6},
	{"GRNF", "Granite Falls Rail", s, "NYSE", "USD", "Railroads", 112.40, 0.23, 0.08, 0.60, 2, 620, 1.7e6},
	{"MRDN", "Meridian Mutual Insurance", s, "NYSE", "USD", "Property & Casualty Insurance", 73.90, 0.21, 0.06, 0.55, 2, 540, 1.9e6},
	{"AUXM", "Auxmoor Motors", s, "NYSE", "USD", "Automobile Makers", 18.60, 0.42, 0.03, 0.60, 2, 3100, 2.4e7},
	{"PLNH", "Plainhill Foods", s, "NYSE", "USD", "Packaged Foods", 47.30, 0.17, 0.04, 0.40, 2, 880, 3.1e6},
	{"VLTG", "Voltage Grid Utilities", s, "NYSE", "USD", "Electric Utilities", 52.80, 0.18, 0.04, 0.35, 2, 1200, 3.6e6},
	{"SLTR", "Saltire Realty Trust", s, "NYSE", "USD", "Commercial REITs", 36.40, 0.26, 0.03, 0.55, 2, 700, 2.8e6},
	// NASDAQ
	{"QNTC", "Quantic Semiconductors", s, "NASDAQ", "USD", "Semiconductors", 38.90, 0.45, 0.20, 0.70, 2, 2400, 3.1e7},
	{"NWSC", "Northwind Software", s, "NASDAQ", "USD", "Application Software", 54.20, 0.34, 0.16, 0.65, 2, 1500, 9.8e6},
	{"CLDR", "Cloudreach Systems", s, "NASDAQ", "USD", "Systems Software", 96.10, 0.30, 0.14, 0.65, 2, 1800, 7.2e6},
	{"BIOV", "Biovanta Therapeutics", s, "NASDAQ", "USD", "Biotechnology", 27.45, 0.55, 0.06, 0.40, 2, 420, 5.6e6},
	{"PXLM", "Pixelmoor Media", s, "NASDAQ", "USD", "Interactive Media", 71.30, 0.38, 0.13, 0.65, 2, 2600, 1.5e7},
	{"SHPX", "Shopexa Online", s, "NASDAQ", "USD", "Online Retail", 44.80, 0.41, 0.12, 0.65, 2, 1100, 1.1e7},
	{"MDTX", "Meditrax Devices", s, "NASDAQ", "USD", "Medical Devices", 88.60, 0.25, 0.09, 0.55, 2, 390, 1.4e6},
	{"LNKW", "Linkwave Networks", s, "NASDAQ", "USD", "Communications Equipment", 23.15, 0.33, 0.05, 0.60, 2, 1350, 9.1e6},
	{"STRM", "Streamora Entertainment", s, "NASDAQ", "USD", "Entertainment", 64.00, 0.44, 0.08, 0.55, 2, 450, 6.4e6},
	{"DTVX", "Datavex Market Data", s, "NASDAQ", "USD", "Exchanges & Market Data", 129.50, 0.22, 0.11, 0.55, 2, 210, 8.5e5},
	// LSE
	{"THMS", "Thameside Bank", s, "LSE", "GBP", "Diversified Banks", 3.42, 0.28, 0.03, 0.60, 2, 9800, 3.2e7},
	{"ALBN", "Albion Mining", s, "LSE", "GBP", "Diversified Metals", 14.85, 0.36, 0.04, 0.55, 2, 1250, 4.4e6},
	{"KSTL", "Kestrel Aerospace", s, "LSE", "GBP", "Aerospace & Defence", 6.20, 0.27, 0.07, 0.50, 2, 2900, 1.2e7},
	{"BRWL", "Brightwell Beverages", s, "LSE", "GBP", "Beverages", 28.70, 0.18, 0.05, 0.40, 2, 520, 1.6e6},
	{"HRTL", "Heartland Telecom", s, "LSE", "GBP", "Wireless Telecom", 1.36, 0.25, 0.00, 0.45, 2, 26000, 6.1e7},
	// XETRA
	{"RHNC", "Rheinchem", s, "XETRA", "EUR", "Specialty Chemicals", 68.40, 0.27, 0.04, 0.60, 2, 920, 2.6e6},
	{"ELBW", "Elbwerk Fahrzeugteile", s, "XETRA", "EUR", "Auto Parts", 31.75, 0.35, 0.03, 0.60, 2, 610, 2.2e6},
	{"SPRV", "Spreeversicherung", s, "XETRA", "EUR", "Life Insurance", 142.30, 0.22, 0.06, 0.55, 2, 400, 9.5e5},
	{"WSFT", "Weserfeld Software", s, "XETRA", "EUR", "IT Services", 88.20, 0.29, 0.12, 0.60, 2, 1230, 3.3e6},
	{"ISRE", "Isar Erneuerbare Energien", s, "XETRA", "EUR", "Renewable Power", 19.90, 0.39, 0.07, 0.45, 2, 880, 5.1e6},
	// TSX
	{"MPLR", "Maple Ridge Resources", s, "TSX", "CAD", "Oil & Gas Exploration", 22.35, 0.38, 0.04, 0.55, 2, 1700, 6.7e6},
	{"NRGD", "Northgold Mining", s, "TSX", "CAD", "Gold Mining", 16.80, 0.37, 0.05, 0.30, 2, 1150, 5.3e6},
	{"LKSH", "Lakeshore Logistics", s, "TSX", "CAD", "Air Freight & Logistics", 45.60, 0.26, 0.07, 0.55, 2, 310, 1.1e6},
	{"PRFN", "Prairie Financial", s, "TSX", "CAD", "Regional Banks", 61.25, 0.20, 0.06, 0.60, 2, 1420, 3.9e6},
	// ASX
	{"CRLR", "Coral Range Resources", s, "ASX", "AUD", "Steel", 12.40, 0.33, 0.05, 0.55, 2, 3000, 8.8e6},
	{"SDNY", "Southern Cross Health", s, "ASX", "AUD", "Health Care Providers", 24.90, 0.22, 0.07, 0.45, 2, 480, 1.5e6},
	{"WTLB", "Wattle Bank", s, "ASX", "AUD", "Regional Banks", 29.30, 0.21, 0.05, 0.60, 2, 1700, 5.0e6},
	{"OUTB", "Outback Household Products", s, "ASX", "AUD", "Household Products", 8.75, 0.19, 0.04, 0.40, 2, 820, 2.4e6},
	// JPX (yen: whole-yen tick)
	{"SKRE", "Sakura Electronics", s, "JPX", "JPY", "Electronic Components", 3240, 0.31, 0.09, 0.60, 0, 780, 2.9e6},
	{"FJMC", "Fujimachi Machinery", s, "JPX", "JPY", "Industrial Machinery", 1875, 0.28, 0.06, 0.60, 0, 1150, 3.4e6},
	{"KZNM", "Kazenami Motors", s, "JPX", "JPY", "Automobile Makers", 5120, 0.27, 0.05, 0.60, 0, 1600, 4.6e6},
	{"HNMT", "Hanamatsu Apparel", s, "JPX", "JPY", "Apparel Retail", 2460, 0.30, 0.08, 0.50, 0, 360, 1.3e6},
	// HKEX
	{"VCTH", "Victoria Harbour Holdings", s, "HKEX", "HKD", "Residential REITs", 38.60, 0.28, 0.02, 0.55, 2, 3600, 7.7e6},
	{"JDPL", "Jade Pearl Telecom", s, "HKEX", "HKD", "Wireless Telecom", 71.20, 0.20, 0.02, 0.45, 2, 2100, 6.1e6},
	{"KWLN", "Kowloon Chemical Works", s, "HKEX", "HKD", "Commodity Chemicals", 9.15, 0.34, 0.03, 0.55, 2, 4200, 1.3e7},
	{"LNTN", "Lantern Bay Asset Management", s, "HKEX", "HKD", "Asset Management", 15.40, 0.32, 0.06, 0.60, 2, 2500, 8.9e6},
	// ETFs (fictional funds)
	{"TKUS", "Tradekit Demo US Total Market ETF", et, "NYSE", "USD", "", 120.00, 0.16, 0.08, 0.95, 2, 0, 4.5e6},
	{"TKTE", "Tradekit Demo Technology ETF", et, "NASDAQ", "USD", "", 85.00, 0.24, 0.14, 0.85, 2, 0, 2.2e6},
	{"TKBD", "Tradekit Demo Aggregate Bond ETF", et, "NYSE", "USD", "", 104.00, 0.05, 0.01, -0.15, 2, 0, 5.8e6},
	{"TKGL", "Tradekit Demo Gold Trust", et, "NYSE", "USD", "", 112.00, 0.15, 0.05, 0.05, 2, 0, 7.1e6},
	{"TKEU", "Tradekit Demo Europe Equity ETF", et, "LSE", "GBP", "", 42.00, 0.17, 0.05, 0.85, 2, 0, 9.0e5},
	{"TKEM", "Tradekit Demo Emerging Markets ETF", et, "NYSE", "USD", "", 38.00, 0.21, 0.04, 0.75, 2, 0, 1.6e7},
	// FX pairs (weekdays; listed on LSE, the largest FX centre)
	{"EURUSD", "Euro / US Dollar", fx, "LSE", "USD", "", 1.08720, 0.07, 0.00, 0.10, 5, 0, 1.2e5},
	{"GBPUSD", "British Pound / US Dollar", fx, "LSE", "USD", "", 1.47310, 0.09, -0.01, 0.10, 5, 0, 9.0e4},
	{"USDJPY", "US Dollar / Japanese Yen", fx, "LSE", "JPY", "", 120.180, 0.09, 0.02, 0.15, 3, 0, 1.1e5},
	{"AUDUSD", "Australian Dollar / US Dollar", fx, "LSE", "USD", "", 0.72850, 0.10, -0.01, 0.25, 5, 0, 6.0e4},
	{"USDCAD", "US Dollar / Canadian Dollar", fx, "LSE", "CAD", "", 1.38420, 0.07, 0.00, -0.15, 5, 0, 5.5e4},
	{"USDCHF", "US Dollar / Swiss Franc", fx, "LSE", "CHF", "", 1.00140, 0.08, 0.00, -0.05, 5, 0, 4.0e4},
	// Crypto (fictional coins, every day)
	{"ORBT-USD", "Orbit (fictional coin)", cr, "CRYPTO", "USD", "", 420.00, 0.75, 0.35, 0.30, 2, 0, 3.5e4},
	{"LUMN-USD", "Lumen Token (fictional)", cr, "CRYPTO", "USD", "", 12.50, 0.95, 0.55, 0.30, 4, 0, 2.1e6},
	{"KRST-USD", "Krystal (fictional coin)", cr, "CRYPTO", "USD", "", 85.00, 0.85, 0.40, 0.30, 2, 0, 1.8e5},
	{"NVXC-USD", "Novex Coin (fictional)", cr, "CRYPTO", "USD", "", 6.40, 1.05, 0.65, 0.25, 4, 0, 8.8e6},
	{"PLSM-USD", "Plasma Chain (fictional)", cr, "CRYPTO", "USD", "", 31.00, 0.90, 0.40, 0.30, 2, 0, 6.0e5},
	// Commodities (synthetic spot series on NYSE trading days)
	{"GOLD", "Gold spot (synthetic), USD per troy ounce", cm, "NYSE", "USD", "", 1075.00, 0.15, 0.05, 0.05, 2, 0, 2.0e5},
	{"SILV", "Silver spot (synthetic), USD per troy ounce", cm, "NYSE", "USD", "", 13.90, 0.27, 0.04, 0.15, 2, 0, 9.0e4},
	{"WTIC", "WTI crude oil (synthetic), USD per barrel", cm, "NYSE", "USD", "", 37.00, 0.38, 0.03, 0.35, 2, 0, 4.5e5},
	{"NGAS", "Natural gas (synthetic), USD per MMBtu", cm, "NYSE", "USD", "", 2.33, 0.55, 0.00, 0.15, 2, 0, 1.6e5},
}

// usdPer is the fixed conversion used only to rank stocks of different
// currencies for the demo indexes.
var usdPer = map[string]float64{"USD": 1, "GBP": 1.3, "EUR": 1.1, "CAD": 0.75, "AUD": 0.68, "JPY": 0.0075, "HKD": 0.128}

// indexSpecs are the demo indexes: the size largest stocks by market
// capitalisation among those listed on the given exchanges, rebalanced on
// the first NYSE trading day of every year.
var indexSpecs = []struct {
	symbol, name, description string
	exchanges                 []string
	size                      int
}{
	{"TKXUS15", "Tradekit Demo US 15", "The 15 largest US-listed demo stocks by market capitalisation, rebalanced every January (synthetic).",
		[]string{"NYSE", "NASDAQ"}, 15},
	{"TKXEU6", "Tradekit Demo Europe 6", "The 6 largest London- and Xetra-listed demo stocks by market capitalisation, rebalanced every January (synthetic).",
		[]string{"LSE", "XETRA"}, 6},
	{"TKXAP8", "Tradekit Demo Asia-Pacific 8", "The 8 largest ASX-, JPX- and HKEX-listed demo stocks by market capitalisation, rebalanced every January (synthetic).",
		[]string{"ASX", "JPX", "HKEX"}, 8},
	{"TKXGL25", "Tradekit Demo Global 25", "The 25 largest demo stocks worldwide by US-dollar market capitalisation, rebalanced every January (synthetic).",
		nil, 25},
}

// splitSpecs are the demo's stock splits: each takes effect on the
// asset's first session on or after date, and divides the prices
// simulated from then on by ratio (volumes multiplied), so the traded
// series shows the cliff a real split leaves and the back-adjusted series
// is the simulated path again (to the tick).
var splitSpecs = []struct {
	symbol string
	date   calendar.Date
	ratio  int64
}{
	{"SHPX", calendar.Date{Year: 2021, Month: 6, Day: 1}, 3},  // 3-for-1
	{"WSFT", calendar.Date{Year: 2023, Month: 3, Day: 15}, 2}, // 2-for-1
}

// dividendSpecs are the demo's cash dividends: paid every quarter, ex on
// the asset's first session on or after the 15th of February, May, August
// and November, of amount (per share, in the asset's currency) raised by
// raise every January after 2016. They are declared, not simulated: the
// traded prices are the simulated ones, and only adjusted series feel them.
var dividendSpecs = []struct {
	symbol        string
	amount, raise string
}{
	{"NRGD", "0.12", "0.01"}, // a gold miner, in CAD
	{"TKUS", "0.55", "0.03"}, // the US ETF, in USD
}
