// Package jsonnum writes the numbers of Tradekit's JSON with at most 15
// significant digits, so that float arithmetic's noise never shows:
// 1036.7494999999994 is written 1036.7495, 3.9035897196342892 is written
// 3.90358971963429, and a figure that was exact (a price, a count, 0.1)
// is written as it was.
//
// A float64 holds 15 to 17 significant decimal digits; the last one or two
// are what rounding in a computation leaves behind, not information. The
// rule is strconv.FormatFloat(x, 'g', 15, 64), whose value is then written
// in its shortest form, in encoding/json's notation: plain digits for
// 1e-6 <= |x| < 1e21, else an exponent (1e-7, 1.5e+21).
//
// [AppendFloat] writes one float64 so; [Round] rewrites the numbers of an
// encoded JSON document that have more than 15 significant digits, for
// whatever encoded them (encoding/json's float64 fields among them), and
// leaves the document's bytes as they are when there are none.
package jsonnum
