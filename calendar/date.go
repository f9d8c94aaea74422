package calendar

import (
	"fmt"
	"time"

	"github.com/tradekit/tradekit"
)

// Date is a civil (wall-calendar) date with no time of day and no time
// zone: the date on which an exchange is open or closed, in the exchange's
// own time zone. The zero Date is not valid.
//
// Dates are comparable with == and can be used as map keys. Build one with
// a composite literal, [NewDate], [DateOf] or [ParseDate].
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// NewDate returns the date year-month-day, normalising out-of-range
// months and days the way [time.Date] does (NewDate(2024, 2, 30) is
// 2024-03-01).
func NewDate(year int, month time.Month, day int) Date {
	m := int(month) - 1
	year += m / 12
	m %= 12
	if m < 0 {
		m += 12
		year--
	}
	return fromDays(daysFromCivil(year, time.Month(m+1), 1) + int64(day-1))
}

// DateOf returns the civil date of t in t's location. To get the date of
// an instant at an exchange, convert it first:
// DateOf(t.In(loc)).
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{Year: y, Month: m, Day: d}
}

// ParseDate parses an ISO date "YYYY-MM-DD". The error wraps
// [tradekit.ErrInvalid].
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("calendar: date %q is not YYYY-MM-DD: %w", s, tradekit.ErrInvalid)
	}
	return DateOf(t), nil
}

// String returns the date as "YYYY-MM-DD".
func (d Date) String() string {
	var b [10]byte
	return string(d.appendText(b[:0]))
}

// AppendText implements [encoding.TextAppender]: it appends the date as
// "YYYY-MM-DD" to b. The error is always nil.
func (d Date) AppendText(b []byte) ([]byte, error) {
	return d.appendText(b), nil
}

func (d Date) appendText(b []byte) []byte {
	if d.Year < 0 || d.Year > 9999 || !d.IsValid() {
		return fmt.Appendf(b, "%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
	}
	y, m, dd := d.Year, int(d.Month), d.Day
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-', byte('0'+dd/10), byte('0'+dd%10))
}

// MarshalText implements [encoding.TextMarshaler]; JSON carries a Date as
// "YYYY-MM-DD".
func (d Date) MarshalText() ([]byte, error) {
	return d.AppendText(nil)
}

// UnmarshalText implements [encoding.TextUnmarshaler] for "YYYY-MM-DD".
// The error wraps [tradekit.ErrInvalid].
func (d *Date) UnmarshalText(b []byte) error {
	v, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// IsValid reports whether d names a real day of the proleptic Gregorian
// calendar (the zero Date is not valid).
func (d Date) IsValid() bool {
	return d.Month >= time.January && d.Month <= time.December &&
		d.Day >= 1 && d.Day <= daysIn(d.Year, d.Month)
}

// Weekday returns the day of the week of d.
func (d Date) Weekday() time.Weekday {
	// 1970-01-01 was a Thursday.
	w := (d.days() + 4) % 7
	if w < 0 {
		w += 7
	}
	return time.Weekday(w)
}

// AddDays returns d plus n days (n may be negative).
func (d Date) AddDays(n int) Date {
	return fromDays(d.days() + int64(n))
}

// Sub returns the number of days from e to d (d - e).
func (d Date) Sub(e Date) int {
	return int(d.days() - e.days())
}

// Compare returns -1 if d is before e, 0 if they are equal and +1 if d is
// after e.
func (d Date) Compare(e Date) int {
	switch {
	case d.Year != e.Year:
		return cmpInt(d.Year, e.Year)
	case d.Month != e.Month:
		return cmpInt(int(d.Month), int(e.Month))
	default:
		return cmpInt(d.Day, e.Day)
	}
}

// Before reports whether d is before e.
func (d Date) Before(e Date) bool { return d.Compare(e) < 0 }

// After reports whether d is after e.
func (d Date) After(e Date) bool { return d.Compare(e) > 0 }

// Time returns midnight at the start of d in loc. It panics if loc is nil,
// as [time.Date] does.
func (d Date) Time(loc *time.Location) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
}

// YearDay returns the day of the year of d, in [1, 366].
func (d Date) YearDay() int {
	return int(d.days()-daysFromCivil(d.Year, time.January, 1)) + 1
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y int, m time.Month) int {
	switch m {
	case time.February:
		if isLeap(y) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// days returns the number of days from 1970-01-01 to d.
func (d Date) days() int64 { return daysFromCivil(d.Year, d.Month, d.Day) }

// daysFromCivil is Howard Hinnant's days_from_civil algorithm
// (http://howardhinnant.github.io/date_algorithms.html): the number of days
// from 1970-01-01 to y-m-d in the proleptic Gregorian calendar.
func daysFromCivil(y int, m time.Month, d int) int64 {
	yy := int64(y)
	if m <= time.February {
		yy--
	}
	era := yy
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := yy - era*400
	mp := (int64(m) + 9) % 12
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// fromDays is the inverse of daysFromCivil (Hinnant's civil_from_days).
func fromDays(z int64) Date {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return Date{Year: int(y), Month: time.Month(m), Day: int(d)}
}
