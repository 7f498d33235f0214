package config

import (
	"strings"
	"testing"
)

func mapEnv(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	env := mapEnv("HOST", "example.com", "EMPTY", "", "NESTED", "${HOST}", "PORT", "8080")
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr []string
	}{
		{name: "text without a dollar is unchanged", in: "plain text", want: "plain text"},
		{name: "a set variable is replaced", in: "https://${HOST}/v1", want: "https://example.com/v1"},
		{name: "several variables are replaced", in: "${HOST}:${PORT}", want: "example.com:8080"},
		{name: "a set variable ignores its default", in: "${HOST:-other}", want: "example.com"},
		{name: "an unset variable takes its default", in: "${MISSING:-fallback}", want: "fallback"},
		{name: "an empty variable takes its default", in: "${EMPTY:-fallback}", want: "fallback"},
		{name: "an empty default allows an unset variable", in: "x${MISSING:-}y", want: "xy"},
		{name: "a default may contain colons and spaces", in: "${MISSING:-a: b c}", want: "a: b c"},
		{name: "a set but empty variable without default is empty", in: "[${EMPTY}]", want: "[]"},
		{name: "double dollar is a literal dollar", in: "costs $$5 and $${HOST}", want: "costs $5 and ${HOST}"},
		{name: "a lone dollar is kept", in: "price $5 or $", want: "price $5 or $"},
		{name: "a value from the environment is not expanded again", in: "${NESTED}", want: "${HOST}"},
		{
			name:    "an unset variable is an error saying how to allow empty",
			in:      "${MISSING}",
			wantErr: []string{"environment variable MISSING is not set", "${MISSING:-}"},
		},
		{
			name:    "every unset variable is named",
			in:      "${A1}/${B2}",
			wantErr: []string{"environment variables A1, B2 are not set"},
		},
		{name: "an unclosed reference is an error", in: "${HOST", wantErr: []string{`"${" is not closed`, "$$"}},
		{name: "a bad name is an error", in: "${1X}", wantErr: []string{`"${1X}" is not a variable reference`}},
		{name: "a shell form other than :- is refused", in: "${X-y}", wantErr: []string{`"${X-y}" is not a variable reference`}},
		{name: "a nested reference in a default is refused", in: "${A:-${B}}", wantErr: []string{"a default cannot contain another ${...}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := expand(tt.in, env)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("expand(%q) = %q, want an error", tt.in, got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("expand(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
