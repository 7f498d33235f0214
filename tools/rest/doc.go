// Package rest offers HTTP endpoints to the model as tools: endpoints
// configured one by one (rest_tools) and the operations of OpenAPI 3
// documents (openapi). A Provider turns a tool's arguments into a request,
// sends it with the configured headers, and gives the model the answer, a
// bounded excerpt of a failure, or a short explanation that names no host.
//
// An OpenAPI operation becomes the tool rest__<api>_<operationId>, or for
// one without an operationId rest__<api>_<method>_<path>. Its path, query
// and header parameters are arguments of their own names; its request body
// (JSON, or a form) is the single argument "body", so that body fields and
// parameters never shadow each other. An operation whose required body is
// neither is left out. Results of operations other than GET and HEAD are
// never cached, whatever the configured cache says.
//
// Documents that are files are read by New, which fails on one that cannot
// be used. Documents given by URL are fetched by Warmup; one that cannot be
// fetched has no tools until a background retry, with growing waits, gets
// it, and the provider then announces the new tools (tools.Notifier).
package rest
