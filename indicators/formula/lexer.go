package formula

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/tradekit/tradekit"
)

// tokKind is the kind of a lexical token.
type tokKind uint8

const (
	tEOF tokKind = iota
	tNum
	tIdent
	tPlus   // +
	tMinus  // -
	tStar   // *
	tSlash  // /
	tCaret  // ^
	tLParen // (
	tRParen // )
	tLBrack // [
	tRBrack // ]
	tComma  // ,
	tQuest  // ?
	tColon  // :
	tLT     // <
	tLE     // <=
	tGT     // >
	tGE     // >=
	tEQ     // ==
	tNE     // !=
	tAnd    // and
	tOr     // or
	tNot    // not
)

// tokText is the source spelling of each operator token.
var tokText = [...]string{
	tEOF: "end of formula", tPlus: "+", tMinus: "-", tStar: "*", tSlash: "/", tCaret: "^",
	tLParen: "(", tRParen: ")", tLBrack: "[", tRBrack: "]", tComma: ",", tQuest: "?", tColon: ":",
	tLT: "<", tLE: "<=", tGT: ">", tGE: ">=", tEQ: "==", tNE: "!=",
	tAnd: "and", tOr: "or", tNot: "not",
}

// token is one lexical token; pos is the byte offset of its first character.
type token struct {
	kind tokKind
	pos  int
	text string  // identifier or number spelling
	num  float64 // value of a tNum
}

// describe returns the token as an error message names it.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of formula"
	case tNum, tIdent:
		return tradekit.Quote(t.text)
	}
	return strconv.Quote(tokText[t.kind])
}

// lex splits src into tokens, ending with a tEOF token at len(src).
func lex(src string) ([]token, *SyntaxError) {
	var toks []token
	i := 0
	for {
		for i < len(src) && isSpace(src[i]) {
			i++
		}
		if i >= len(src) {
			return append(toks, token{kind: tEOF, pos: len(src)}), nil
		}
		c, start := src[i], i
		switch {
		case isLetter(c):
			for i < len(src) && (isLetter(src[i]) || isDigit(src[i])) {
				i++
			}
			word := src[start:i]
			kind := tIdent
			switch word {
			case "and":
				kind = tAnd
			case "or":
				kind = tOr
			case "not":
				kind = tNot
			}
			toks = append(toks, token{kind: kind, pos: start, text: word})
			continue
		case isDigit(c):
			t, err := lexNumber(src, start)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i = start + len(t.text)
			continue
		}
		kind, size := tEOF, 1
		next := byte(0)
		if i+1 < len(src) {
			next = src[i+1]
		}
		switch c {
		case '+':
			kind = tPlus
		case '-':
			kind = tMinus
		case '*':
			kind = tStar
		case '/':
			kind = tSlash
		case '^':
			kind = tCaret
		case '(':
			kind = tLParen
		case ')':
			kind = tRParen
		case '[':
			kind = tLBrack
		case ']':
			kind = tRBrack
		case ',':
			kind = tComma
		case '?':
			kind = tQuest
		case ':':
			kind = tColon
		case '<':
			kind = tLT
			if next == '=' {
				kind, size = tLE, 2
			}
		case '>':
			kind = tGT
			if next == '=' {
				kind, size = tGE, 2
			}
		case '=':
			if next == '=' {
				kind, size = tEQ, 2
			}
		case '!':
			if next == '=' {
				kind, size = tNE, 2
			}
		}
		if kind == tEOF {
			switch c {
			case '=':
				return nil, newSyntaxError(src, i, "unexpected \"=\" (use == to compare)")
			case '!':
				return nil, newSyntaxError(src, i, "unexpected \"!\" (use not, or != to compare)")
			case '.':
				return nil, newSyntaxError(src, i, "a number must start with a digit")
			}
			r, rsize := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError && rsize == 1 {
				return nil, newSyntaxError(src, i, "invalid UTF-8 byte 0x%02x", src[i])
			}
			return nil, newSyntaxError(src, i, "unexpected character %q", r)
		}
		toks = append(toks, token{kind: kind, pos: i})
		i += size
	}
}

// lexNumber scans the number that starts at src[start], a digit:
//
//	digit {digit} ["." digit {digit}] [("e"|"E") ["+"|"-"] digit {digit}]
//
// A letter, digit or dot directly after it is an error, so that a number
// never runs into the next token.
func lexNumber(src string, start int) (token, *SyntaxError) {
	i := start
	digits := func() int {
		n := 0
		for i < len(src) && isDigit(src[i]) {
			i++
			n++
		}
		return n
	}
	digits()
	if i < len(src) && src[i] == '.' {
		i++
		if digits() == 0 {
			return token{}, newSyntaxError(src, start, "malformed number %s: a digit must follow the decimal point", tradekit.Quote(src[start:i]))
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if digits() == 0 {
			return token{}, newSyntaxError(src, start, "malformed number %s: the exponent needs digits", tradekit.Quote(src[start:i]))
		}
	}
	if i < len(src) && (isLetter(src[i]) || src[i] == '.') {
		return token{}, newSyntaxError(src, start, "malformed number %s", tradekit.Quote(src[start:i+1]))
	}
	text := src[start:i]
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(v, 0) {
		return token{}, newSyntaxError(src, start, "number %s is out of range", cut(text))
	}
	return token{kind: tNum, pos: start, text: text, num: v}, nil
}

func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }
