// Package rest offers HTTP endpoints to the model as tools: endpoints
// configured one by one (rest_tools) and the operations of OpenAPI 3
// documents (openapi). A Provider turns a tool's arguments into a request,
// sends it with the configured headers, and gives the model the answer, a
// bounded excerpt of a failure, or a short explanation that names no host.
package rest
