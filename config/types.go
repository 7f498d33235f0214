package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/slackbot/slackbot/redact"
)

// Secret is a credential read from the configuration. Its String and
// MarshalText forms are redacted, so a Secret that reaches a log line, an
// error or a JSON dump shows only that it is set. Reveal returns the value.
type Secret string

// Reveal returns the secret's value, for the one place that sends it.
func (s Secret) Reveal() string { return string(s) }

// String redacts the secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redact.Mark
}

// MarshalText redacts the secret in JSON, YAML and zap output.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// GoString redacts the secret under %#v.
func (s Secret) GoString() string { return fmt.Sprintf("config.Secret(%q)", s.String()) }

// Format redacts the secret under every fmt verb (%v, %+v, %#v, %s, %q, %x,
// %d, …), including verbs a string does not support, which fmt would
// otherwise answer by printing the raw value.
func (s Secret) Format(f fmt.State, verb rune) {
	switch verb {
	case 'v':
		if f.Flag('#') {
			fmt.Fprint(f, s.GoString())
			return
		}
	case 'q':
		fmt.Fprintf(f, "%q", s.String())
		return
	}
	fmt.Fprint(f, s.String())
}

// Duration is a time.Duration written in the configuration as a Go duration
// string such as "30s" or "10m".
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalText parses a duration string. A bare number is refused because
// it is ambiguous (seconds or milliseconds).
func (d *Duration) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "" {
		*d = 0
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration: write it with a unit, like \"30s\", \"1500ms\" or \"10m\"", s)
	}
	if v < 0 {
		return fmt.Errorf("%q: a duration cannot be negative", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }
