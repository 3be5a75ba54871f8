package wire

import (
	"cmp"
	"time"

	"github.com/keelgen/keel/internal/toolrules"
)

// Bounds on a value written as text, in the keywords ajv-formats gives
// them: formatMinimum, formatMaximum, formatExclusiveMinimum and
// formatExclusiveMaximum, compared in the text's own form.

// DurationBound checks the duration text s against bound under keyword: a
// text the syntax allows but a time.Duration cannot hold is "range".
func DurationBound(s, keyword string, bound time.Duration) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return Fail("range")
	}
	return boundFails(cmp.Compare(d, bound), keyword)
}

// DecimalBound checks the decimal text s (a JSON number literal, such as
// shopspring's Decimal writes) against the decimal bound under keyword,
// exactly and in time linear in the text; other text is "format".
func DecimalBound(s, keyword, bound string) error {
	if !toolrules.DecimalText(s) {
		return Fail("format")
	}
	return boundFails(cmpDecimal(parseDecimal([]byte(s)), parseDecimal([]byte(bound))), keyword)
}

// boundFails is the refusal of a value that compares c to its bound under
// keyword, or nil.
func boundFails(c int, keyword string) error {
	var ok bool
	switch keyword {
	case "formatMinimum":
		ok = c >= 0
	case "formatExclusiveMinimum":
		ok = c > 0
	case "formatMaximum":
		ok = c <= 0
	case "formatExclusiveMaximum":
		ok = c < 0
	}
	if ok {
		return nil
	}
	return Fail(keyword)
}
