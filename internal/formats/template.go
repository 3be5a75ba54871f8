package formats

import "github.com/yosida95/uritemplate/v3"

// URITemplate: RFC 6570 §2, every level's operators, prefixes up to 9999
// and explode modifiers; literals as §2.1 allows them.
func URITemplate(s string) bool {
	_, err := uritemplate.New(s)
	return err == nil
}
