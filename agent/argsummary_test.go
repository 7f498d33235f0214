package agent

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestArgsSummaryIsOneShortLineWithoutSecrets(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 200)
	cases := []struct {
		name, raw string
		want      string
		not       []string
	}{
		{name: "no arguments give no summary", raw: "{}", want: ""},
		{name: "values are named by key, strings quoted, in key order", raw: `{"repo":"a/b","query":"rate limits","limit":5}`,
			want: `limit: 5, query: "rate limits", repo: "a/b"`},
		{name: "line breaks fold into spaces", raw: `{"q":"one\ntwo\r\n three"}`, want: `q: "one two three"`},
		{name: "nested values are elided", raw: `{"filter":{"a":1},"ids":[1,2,3]}`, want: `filter: {…}, ids: [3]`},
		{name: "secret-looking keys are masked", raw: `{"api_key":"hunter2","password":"pw","q":"x"}`,
			want: `api_key: •••, password: •••, q: "x"`, not: []string{"hunter2", "pw\""}},
		{name: "credentials inside values are redacted", raw: `{"note":"use xoxb-1234567890-abcdefghij"}`,
			not: []string{"xoxb-1234567890-abcdefghij"}},
		{name: "text that is not JSON is summarised as text", raw: "plain\ntext", want: "plain text"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := argsSummary(c.raw)
			if c.want != "" && got != c.want || c.raw == "{}" && got != "" {
				t.Errorf("argsSummary(%q) = %q; want %q", c.raw, got, c.want)
			}
			for _, n := range c.not {
				if strings.Contains(got, n) {
					t.Errorf("argsSummary(%q) = %q shows %q", c.raw, got, n)
				}
			}
		})
	}
	got := argsSummary(`{"q":"` + long + `","r":"` + long + `"}`)
	if n := utf8.RuneCountInString(got); n > maxArgsSummary || strings.ContainsAny(got, "\n\r") || !strings.Contains(got, "…") {
		t.Errorf("a long summary is %d characters (%q); want at most %d on one line, cut with …", n, got, maxArgsSummary)
	}
}
