package database

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
)

// The parameters of the statements that take them ([Prepared], COPY)
// are mostly UUIDs and decimals. Both are driver.Valuers whose Value is
// a string, which pgx cannot encode in binary as a uuid or a numeric: it
// builds an error, parses the string back as text, and encodes what that
// gave, which took an eighth of the order benchmark's Go CPU. So each
// connection's type map encodes them directly: a uuid.UUID as its 16
// bytes, a decimal.Decimal as its coefficient and exponent. Text and
// simple-protocol queries take their Value, as before.

// registerParams has m encode uuid.UUID and decimal.Decimal parameters,
// and pointers to them, directly, before it tries anything else for
// them.
func registerParams(m *pgtype.Map) {
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{wrapParam}, m.TryWrapEncodePlanFuncs...)
}

// wrapParam is a [pgtype.TryWrapEncodePlanFunc] for uuid.UUID and
// decimal.Decimal values.
func wrapParam(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
	switch v := value.(type) {
	case uuid.UUID:
		return &uuidParam{}, [16]byte(v), true
	case decimal.Decimal:
		return &decimalParam{}, numericOf(v), true
	// pgx dereferences no pointer to a driver.Valuer, and a pointer to
	// either is one; a nil one is NULL before any plan runs.
	case *uuid.UUID:
		if v != nil {
			return &uuidParam{}, [16]byte(*v), true
		}
	case *decimal.Decimal:
		if v != nil {
			return &decimalParam{}, numericOf(*v), true
		}
	}
	return nil, nil, false
}

// numericOf returns d as a pgtype.Numeric: its coefficient and exponent.
func numericOf(d decimal.Decimal) pgtype.Numeric {
	return pgtype.Numeric{Int: d.Coefficient(), Exp: d.Exponent(), Valid: true}
}

// uuidParam encodes a uuid.UUID as the [16]byte it is.
type uuidParam struct{ next pgtype.EncodePlan }

// SetNext implements [pgtype.WrappedEncodePlanNextSetter].
func (p *uuidParam) SetNext(next pgtype.EncodePlan) { p.next = next }

// Encode implements [pgtype.EncodePlan].
func (p *uuidParam) Encode(value any, buf []byte) ([]byte, error) {
	switch v := value.(type) {
	case uuid.UUID:
		return p.next.Encode([16]byte(v), buf)
	case *uuid.UUID:
		if v != nil {
			return p.next.Encode([16]byte(*v), buf)
		}
	}
	return nil, nil // NULL
}

// decimalParam encodes a decimal.Decimal as a [pgtype.Numeric].
type decimalParam struct{ next pgtype.EncodePlan }

// SetNext implements [pgtype.WrappedEncodePlanNextSetter].
func (p *decimalParam) SetNext(next pgtype.EncodePlan) { p.next = next }

// Encode implements [pgtype.EncodePlan].
func (p *decimalParam) Encode(value any, buf []byte) ([]byte, error) {
	switch v := value.(type) {
	case decimal.Decimal:
		return p.next.Encode(numericOf(v), buf)
	case *decimal.Decimal:
		if v != nil {
			return p.next.Encode(numericOf(*v), buf)
		}
	}
	return nil, nil // NULL
}
