package form

import (
	"net/mail"
	"net/url"
	"time"
)

// checkFormat checks the string formats form mode allows; an unknown
// format accepts anything, as JSON Schema does.
func checkFormat(format, s string) string {
	switch format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return "Enter an email address, such as name@example.com."
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "") {
			return "Enter a full address, such as https://example.com/page."
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return "Enter a date as YYYY-MM-DD."
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return "Enter a date and time as YYYY-MM-DDTHH:MM:SSZ."
		}
	}
	return ""
}
