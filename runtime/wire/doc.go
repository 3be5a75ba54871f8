// Package wire is what keelgen's generated codecs call: a strict,
// token-by-token reader of a tool's arguments and an append-only writer of
// its result, with the checks the generated code makes on the Go values
// (bounds compared exactly, formats, lengths in code points). Nothing here
// reflects on a type; generated code says what to read into and what to
// check, and the executor owns the Decoder and Encoder it passes in.
//
// Errors are *Error: a JSON Pointer into the schema's declared places and
// the schema keyword that failed, for invalid_arguments' Details, plus a
// reason for the protected log. No value from the input is kept in them.
package wire
