package rest

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/slackbot/slackbot/tools"
)

// errorExcerpt bounds how much of a failed answer's body the model sees:
// enough for an API's error message, not a whole HTML error page.
const errorExcerpt = 2048

// readBounded reads at most max bytes and reports whether there was more.
func readBounded(r io.Reader, max int) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if len(b) > max {
		return b[:max], true, err
	}
	return b, false, err
}

// cutRunes shortens s to at most n bytes without splitting a character.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// wholeRunes drops a character split by a size bound at the end of b.
func wholeRunes(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// status is a status line the model can read: "HTTP 404 Not Found".
func status(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("HTTP %d %s", code, t)
	}
	return fmt.Sprintf("HTTP %d", code)
}

// result turns a complete answer into what the model reads. A status
// outside 2xx is a failure carrying the status and the start of the body,
// which usually says what was wrong with the request.
func result(resp *http.Response, body []byte, cut bool) tools.Result {
	ctype := resp.Header.Get("Content-Type")
	if cut {
		body = wholeRunes(body)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := status(resp.StatusCode)
		if t := bodyText(body, ctype); t != "" {
			ex := cutRunes(t, errorExcerpt)
			msg += "\n" + ex
			if len(ex) < len(t) || cut {
				msg += "\n[… the rest of the answer was cut]"
			}
		}
		return tools.Result{Content: msg, IsError: true}
	}
	t := bodyText(body, ctype)
	if t == "" {
		return tools.Result{Content: fmt.Sprintf("%s (no content)", status(resp.StatusCode))}
	}
	if cut {
		t += fmt.Sprintf("\n[… the answer was cut at %d bytes; ask for less (filters, fields, paging) to see the rest]", len(body))
	}
	return tools.Result{Content: t}
}

// bodyText is a body as text for the model. Bytes that are not text are
// described rather than shown: they mean nothing to a model.
func bodyText(body []byte, ctype string) string {
	t := strings.TrimSpace(string(body))
	if t == "" {
		return ""
	}
	if textual(ctype) || utf8.ValidString(t) {
		return strings.ToValidUTF8(t, "\uFFFD")
	}
	mt, _, _ := mime.ParseMediaType(ctype)
	if mt == "" {
		mt = "unknown type"
	}
	return fmt.Sprintf("[binary answer: %s, %d bytes]", mt, len(body))
}

// textual reports whether a content type is text a model can read.
func textual(ctype string) bool {
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		return false
	}
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		mt == "application/xml" || strings.HasSuffix(mt, "+xml") || mt == "application/x-ndjson" ||
		mt == "application/yaml" || mt == "application/javascript"
}
