package formats

import "regexp"

// duration is RFC 3339 Appendix A's ABNF, rule for rule:
//
//	dur-second = 1*DIGIT "S"
//	dur-minute = 1*DIGIT "M" [dur-second]
//	dur-hour   = 1*DIGIT "H" [dur-minute]
//	dur-time   = "T" (dur-hour / dur-minute / dur-second)
//	dur-day    = 1*DIGIT "D"
//	dur-week   = 1*DIGIT "W"
//	dur-month  = 1*DIGIT "M" [dur-day]
//	dur-year   = 1*DIGIT "Y" [dur-month]
//	dur-date   = (dur-day / dur-month / dur-year) [dur-time]
//	duration   = "P" (dur-date / dur-time / dur-week)
var duration = func() *regexp.Regexp {
	const (
		second = `[0-9]+S`
		minute = `[0-9]+M(?:` + second + `)?`
		hour   = `[0-9]+H(?:` + minute + `)?`
		time   = `T(?:` + hour + `|` + minute + `|` + second + `)`
		day    = `[0-9]+D`
		week   = `[0-9]+W`
		month  = `[0-9]+M(?:` + day + `)?`
		year   = `[0-9]+Y(?:` + month + `)?`
		date   = `(?:` + day + `|` + month + `|` + year + `)(?:` + time + `)?`
	)
	return regexp.MustCompile(`^P(?:` + date + `|` + time + `|` + week + `)$`)
}()

// Duration: RFC 3339 Appendix A (P1Y2M3DT4H5M6S, P4W; a unit may be left
// out only where the grammar allows: not P1Y2D, not PT1H2S).
func Duration(s string) bool { return duration.MatchString(s) }
