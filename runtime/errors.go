package runtime

import (
	"fmt"

	"github.com/keelgen/keel/internal/toolrules"
)

// businessError is a handler's business failure (Fail).
type businessError struct {
	Code    Code
	Message string
}

func (e *businessError) Error() string {
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Fail returns a handler's business failure: a snake_case code and a message
// written for the model. It is the only error whose text reaches the model;
// every other error a handler returns becomes tool_internal_error. The
// code must be one the tool declares (errors= in its //keel:tool line);
// otherwise the executor reports the call as tool_internal_error, so the
// model only ever sees codes of the reviewed contract.
func Fail(code Code, message string) error {
	return &businessError{Code: code, Message: message}
}

// isBusinessCode reports whether code is a well-formed business error code
// (toolrules.BusinessCode).
func isBusinessCode(code Code) bool { return toolrules.BusinessCode(string(code)) }
