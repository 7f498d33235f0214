// Package tooloutput keeps tool results too large to show the model and
// answers questions about them. A result over the size cap is written to a
// file under the session's directory and the model is given a handle
// instead (TooLargeMessage); it then calls tool_output with the handle and
// what it needs, and an Extractor answers from the whole result — by
// reading it in chunks with a model, or by letting a sub-agent Read and
// Grep the file — falling back to the top and bottom of the result only
// when extraction fails.
package tooloutput
