package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// openaiCodes are the OpenAI error codes a Reply may name, with the HTTP
// status, error type and message the real service sends with them.
var openaiCodes = map[string]struct {
	status      int
	typ, detail string
}{
	"rate_limit_exceeded":     {429, "requests", "Rate limit reached for requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms."},
	"insufficient_quota":      {429, "insufficient_quota", "You exceeded your current quota, please check your plan and billing details."},
	"invalid_api_key":         {401, "invalid_request_error", "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."},
	"model_not_found":         {404, "invalid_request_error", "The model does not exist or you do not have access to it."},
	"context_length_exceeded": {400, "invalid_request_error", "This model's maximum context length is 128000 tokens. Please reduce the length of the messages."},
	"server_error":            {500, "server_error", "The server had an error while processing your request. Sorry about that!"},
}

// anthropicTypes are the Anthropic error types with their HTTP status.
var anthropicTypes = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
}

var anthropicMessages = map[string]string{
	"invalid_request_error": "Invalid request.",
	"authentication_error":  "invalid x-api-key",
	"billing_error":         "Your credit balance is too low to access the Anthropic API.",
	"permission_error":      "Your API key does not have permission to use the specified resource.",
	"not_found_error":       "The requested resource could not be found.",
	"request_too_large":     "Request exceeds the maximum allowed number of bytes.",
	"rate_limit_error":      "This request would exceed the rate limit for your organization. Please try again later.",
	"api_error":             "Internal server error",
	"timeout_error":         "Request timed out",
	"overloaded_error":      "Overloaded",
}

// errorStatus is the HTTP status of an error reply in format: Status, or
// the status the service sends with the (translated) error type.
func errorStatus(format string, r Reply) int {
	if r.Status != 0 {
		return r.Status
	}
	status := defaultStatus(r)
	if format == FormatAnthropic {
		typ, _ := anthropicError(r, status)
		return anthropicTypes[typ]
	}
	if _, code, _ := openaiError(r, status); openaiCodes[code].status != 0 {
		return openaiCodes[code].status
	}
	return status
}

func defaultStatus(r Reply) int {
	if c, ok := openaiCodes[r.ErrorType]; ok {
		return c.status
	}
	if s, ok := anthropicTypes[r.ErrorType]; ok {
		return s
	}
	return http.StatusBadRequest
}

// openaiError returns the OpenAI type and code for an error reply; code is
// "" for a null code.
func openaiError(r Reply, status int) (typ, code, message string) {
	if c, ok := openaiCodes[r.ErrorType]; ok {
		return c.typ, r.ErrorType, c.detail
	}
	if _, ok := anthropicTypes[r.ErrorType]; !ok && r.ErrorType != "" {
		if status >= 500 {
			return "server_error", r.ErrorType, "The server had an error while processing your request."
		}
		return "invalid_request_error", r.ErrorType, "Invalid request."
	}
	// An Anthropic type or none: go by status.
	switch {
	case r.ErrorType == "billing_error":
		return "insufficient_quota", "insufficient_quota", openaiCodes["insufficient_quota"].detail
	case status == 429:
		return "requests", "rate_limit_exceeded", openaiCodes["rate_limit_exceeded"].detail
	case status == 401:
		return "invalid_request_error", "invalid_api_key", openaiCodes["invalid_api_key"].detail
	case status == 403:
		return "invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported"
	case status == 404:
		return "invalid_request_error", "model_not_found", openaiCodes["model_not_found"].detail
	case status >= 500:
		return "server_error", "", openaiCodes["server_error"].detail
	}
	return "invalid_request_error", "", "Invalid request."
}

// anthropicError returns the Anthropic error type for an error reply.
func anthropicError(r Reply, status int) (typ, message string) {
	if _, ok := anthropicTypes[r.ErrorType]; ok {
		return r.ErrorType, anthropicMessages[r.ErrorType]
	}
	if r.ErrorType == "insufficient_quota" {
		return "billing_error", anthropicMessages["billing_error"]
	}
	typ = "invalid_request_error"
	switch {
	case status == 401:
		typ = "authentication_error"
	case status == 402:
		typ = "billing_error"
	case status == 403:
		typ = "permission_error"
	case status == 404:
		typ = "not_found_error"
	case status == 413:
		typ = "request_too_large"
	case status == 429:
		typ = "rate_limit_error"
	case status == 529:
		typ = "overloaded_error"
	case status >= 500:
		typ = "api_error"
	}
	return typ, anthropicMessages[typ]
}

// errorBody returns the format's error object for r (the whole body for
// OpenAI, the body without request_id for Anthropic).
func errorBody(format string, r Reply, status int) any {
	if format == FormatAnthropic {
		typ, msg := anthropicError(r, status)
		if r.ErrorMessage != "" {
			msg = r.ErrorMessage
		}
		return anError{Type: "error", Error: anErrorDetail{Type: typ, Message: msg}}
	}
	typ, code, msg := openaiError(r, status)
	if r.ErrorMessage != "" {
		msg = r.ErrorMessage
	}
	var c *string
	if code != "" {
		c = &code
	}
	return oaError{Error: oaErrorDetail{Message: msg, Type: typ, Param: nil, Code: c}}
}

type oaError struct {
	Error oaErrorDetail `json:"error"`
}

type oaErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

type anError struct {
	Type      string        `json:"type"`
	Error     anErrorDetail `json:"error"`
	RequestID string        `json:"request_id,omitempty"`
}

type anErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// writeError answers with the format's error body and headers.
func writeError(w http.ResponseWriter, format string, rec *Recorded, r Reply) {
	status := errorStatus(format, r)
	if r.RetryAfter != "" {
		w.Header().Set("Retry-After", r.RetryAfter)
	}
	if r.RetryAfterMs != "" {
		w.Header().Set("Retry-After-Ms", r.RetryAfterMs)
	}
	body := errorBody(format, r, status)
	if e, ok := body.(anError); ok {
		id := requestID(rec)
		w.Header().Set("Request-Id", id)
		e.RequestID = id
		body = e
	} else {
		w.Header().Set("X-Request-Id", requestID(rec))
	}
	writeJSON(w, status, body)
}

func requestID(rec *Recorded) string {
	if rec.Format == FormatAnthropic {
		return fmt.Sprintf("req_011LLMTEST%06d", rec.seq)
	}
	return fmt.Sprintf("req_llmtest%06d", rec.seq)
}

// marshal encodes v as the services do: no HTML escaping, no trailing
// newline.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("llmtest: " + err.Error()) // our own types always encode
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(marshal(v))
}
