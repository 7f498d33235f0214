package llm

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/slackbot/slackbot/redact"
)

// What adapters share when they turn an SDK's failure into an *Error: the
// wait a server asks for, and a message that is safe to log.

// MaxMessage bounds the text of an Error's Message.
const MaxMessage = 500

// RetryAfter reads how long a server asks the caller to wait: OpenAI's
// retry-after-ms first, then Retry-After in seconds or as an HTTP date.
// It returns 0 when there is no usable value.
func RetryAfter(h http.Header) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// Redact removes key and anything shaped like a credential from s, and
// bounds its length to MaxMessage bytes.
func Redact(s, key string) string {
	if len(key) >= 4 {
		s = strings.ReplaceAll(s, key, redact.Mark)
	}
	s = redact.String(s)
	s = strings.TrimSpace(s)
	if len(s) > MaxMessage {
		s = strings.ToValidUTF8(s[:MaxMessage], "") + "…"
	}
	return s
}

// RedactedError keeps cause reachable with errors.Is and errors.As while its
// text is msg, an already redacted message.
func RedactedError(msg string, cause error) error { return redactedError{msg, cause} }

type redactedError struct {
	msg   string
	cause error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.cause }
