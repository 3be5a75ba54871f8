// Package browsertest drives keel's MCP approval page in a real browser
// (Debian's chromium, through github.com/chromedp/chromedp): a module of
// its own, so that no user of keel gets a browser driver in their go.sum.
// .ci/run installs chromium when it is missing and runs it.
package browsertest
