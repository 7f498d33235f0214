package telemetry

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// SlackTransport wraps the transport of the Slack Web API client so that
// every request is counted by method (the last element of the URL's path,
// "chat.postMessage"; "other" for a path outside /api/, such as a file's
// upload URL, whose last element is unique), with its duration, its 429s and its errors: Slack's
// own error code from an {"ok":false,"error":"…"} answer, http_<status>
// for another failed status, transport when no answer came. It sees each
// request on the wire, so a request retried after a 429 counts twice.
// A nil *Metrics returns next unchanged.
func (m *Metrics) SlackTransport(next http.RoundTripper) http.RoundTripper {
	if m == nil {
		return next
	}
	if next == nil {
		next = http.DefaultTransport
	}
	return &slackTransport{m: m, next: next}
}

type slackTransport struct {
	m    *Metrics
	next http.RoundTripper
}

// peekBytes is how much of an answer is read to find Slack's error code.
// Error answers are small; a longer answer is a success in practice, and
// only its start is looked at.
const peekBytes = 4 << 10

var (
	methodRe   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.]{0,63}$`)
	errorRe    = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)
	okFalseRe  = regexp.MustCompile(`"ok"\s*:\s*false`)
	errFieldRe = regexp.MustCompile(`"error"\s*:\s*"([^"]{1,64})"`)
)

func (t *slackTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	method := path.Base(req.URL.Path)
	if !methodRe.MatchString(method) || path.Base(path.Dir(req.URL.Path)) != "api" {
		method = "other"
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	t.m.slackDuration.WithLabelValues(method).Observe(time.Since(start).Seconds())
	t.m.slackCalls.WithLabelValues(method).Inc()
	if err != nil {
		t.m.slackErrors.WithLabelValues(method, "transport").Inc()
		return resp, err
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		t.m.slackLimited.WithLabelValues(method).Inc()
	case resp.StatusCode >= 300:
		t.m.slackErrors.WithLabelValues(method, "http_"+strconv.Itoa(resp.StatusCode)).Inc()
	default:
		if code := slackErrorCode(resp); code != "" {
			t.m.slackErrors.WithLabelValues(method, code).Inc()
		}
	}
	return resp, nil
}

// slackErrorCode reads the start of a JSON answer for Slack's error code
// and puts what it read back in front of the rest of the body.
func slackErrorCode(resp *http.Response) string {
	if resp.Body == nil || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		return ""
	}
	buf := make([]byte, peekBytes)
	n, err := io.ReadFull(resp.Body, buf)
	buf = buf[:n]
	whole := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	if whole {
		resp.Body = readCloser{bytes.NewReader(buf), resp.Body}
	} else {
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(buf), resp.Body), resp.Body}
	}
	code := ""
	if whole {
		var answer struct {
			OK    *bool  `json:"ok"`
			Error string `json:"error"`
		}
		if json.Unmarshal(buf, &answer) != nil || answer.OK == nil || *answer.OK {
			return ""
		}
		code = answer.Error
	} else {
		if !okFalseRe.Match(buf) {
			return ""
		}
		if m := errFieldRe.FindSubmatch(buf); m != nil {
			code = string(m[1])
		}
	}
	if !errorRe.MatchString(code) {
		return "other"
	}
	return code
}

// readCloser reads from one reader and closes the original body.
type readCloser struct {
	io.Reader
	io.Closer
}
