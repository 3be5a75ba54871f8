package wire

import (
	"bytes"
	"math/big"
)

// decimal is a JSON number's exact value, digits × 10^exp, with digits
// free of leading and trailing zeros (empty for zero). It never computes a
// power of ten, so a literal like 1e-999999999 costs no more than its length.
type decimal struct {
	neg    bool
	digits []byte
	exp    int64
}

// maxExp saturates exponents: beyond it every comparison is already decided.
const maxExp = 1 << 40

// parseDecimal reads a valid JSON number literal.
func parseDecimal(lit []byte) decimal {
	var d decimal
	if len(lit) > 0 && lit[0] == '-' {
		d.neg, lit = true, lit[1:]
	}
	mant, expPart := lit, []byte(nil)
	if i := bytes.IndexAny(lit, "eE"); i >= 0 {
		mant, expPart = lit[:i], lit[i+1:]
	}
	intPart, frac := mant, []byte(nil)
	if i := bytes.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	var exp int64
	if len(expPart) > 0 {
		sign := int64(1)
		switch expPart[0] {
		case '-':
			sign, expPart = -1, expPart[1:]
		case '+':
			expPart = expPart[1:]
		}
		for _, c := range expPart {
			if exp < maxExp {
				exp = exp*10 + int64(c-'0')
			}
		}
		exp *= sign
	}
	digits := make([]byte, 0, len(intPart)+len(frac))
	digits = append(append(digits, intPart...), frac...)
	exp -= int64(len(frac))
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	d.digits, d.exp = digits, exp
	if len(digits) == 0 {
		d.neg, d.exp = false, 0
	}
	return d
}

func (d decimal) isZero() bool { return len(d.digits) == 0 }

// cmpDecimal compares a and b exactly: -1, 0 or +1.
func cmpDecimal(a, b decimal) int {
	switch {
	case a.isZero() && b.isZero():
		return 0
	case a.isZero():
		return map[bool]int{true: 1, false: -1}[b.neg]
	case b.isZero():
		return map[bool]int{true: -1, false: 1}[a.neg]
	case a.neg != b.neg:
		return map[bool]int{true: -1, false: 1}[a.neg]
	}
	c := cmpMagnitude(a, b)
	if a.neg {
		return -c
	}
	return c
}

// cmpMagnitude compares |a| and |b|, both non-zero.
func cmpMagnitude(a, b decimal) int {
	// The position of the leading digit decides first.
	ta, tb := int64(len(a.digits))+a.exp, int64(len(b.digits))+b.exp
	if ta != tb {
		if ta < tb {
			return -1
		}
		return 1
	}
	for i := 0; i < len(a.digits) || i < len(b.digits); i++ {
		ca, cb := byte('0'), byte('0')
		if i < len(a.digits) {
			ca = a.digits[i]
		}
		if i < len(b.digits) {
			cb = b.digits[i]
		}
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
	}
	return 0
}

// maxRatExp bounds the exponents multipleOf computes with: past it the
// check refuses instead of building huge numbers.
const maxRatExp = 1000

// rat is d as a big.Rat, or nil when its exponent is too large to build.
func (d decimal) rat() *big.Rat {
	if d.exp > maxRatExp || d.exp < -maxRatExp {
		return nil
	}
	n, ok := new(big.Int).SetString(string(d.digits)+"", 10)
	if d.isZero() {
		n, ok = new(big.Int), true
	}
	if !ok {
		return nil
	}
	if d.neg {
		n.Neg(n)
	}
	r := new(big.Rat).SetInt(n)
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs(d.exp)), nil)
	if d.exp >= 0 {
		return r.Mul(r, new(big.Rat).SetInt(p))
	}
	return r.Quo(r, new(big.Rat).SetInt(p))
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// isMultiple reports whether d is an integer multiple of m (m > 0).
func isMultiple(d, m decimal) bool {
	if d.isZero() {
		return true
	}
	rd, rm := d.rat(), m.rat()
	if rd == nil || rm == nil {
		return false
	}
	return new(big.Rat).Quo(rd, rm).IsInt()
}
