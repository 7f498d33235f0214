package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
)

func TestRestToolRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		tool      config.RestTool
		args      string
		wantPath  string
		wantQuery string
		wantBody  string // JSON, compared as values; "" means no body
	}{
		{
			name:     "URL placeholders are filled and path-escaped",
			tool:     config.RestTool{URL: "{base}/users/{user}/files/{file}"},
			args:     `{"user":"a b/c","file":"ü?.txt"}`,
			wantPath: "/users/a%20b%2Fc/files/%C3%BC%3F.txt",
		},
		{
			name:      "placeholders after the question mark are query-escaped",
			tool:      config.RestTool{URL: "{base}/search?q={q}&lang=en"},
			args:      `{"q":"a&b=c d"}`,
			wantPath:  "/search",
			wantQuery: "q=a%26b%3Dc+d&lang=en",
		},
		{
			name:      "GET sends the other arguments as query parameters, arrays and objects as JSON",
			tool:      config.RestTool{URL: "{base}/items", Parameters: map[string]any{"type": "object"}},
			args:      `{"n":3,"flag":true,"name":"x y","tags":["a","b"],"filter":{"k":1},"none":null}`,
			wantPath:  "/items",
			wantQuery: "filter=%7B%22k%22%3A1%7D&flag=true&n=3&name=x+y&tags=%5B%22a%22%2C%22b%22%5D",
		},
		{
			name:      "DELETE sends the other arguments as query parameters",
			tool:      config.RestTool{Method: "delete", URL: "{base}/items/{id}", Parameters: map[string]any{"type": "object"}},
			args:      `{"id":"7","hard":true}`,
			wantPath:  "/items/7",
			wantQuery: "hard=true",
		},
		{
			name:     "POST sends the arguments left after the URL as a JSON body",
			tool:     config.RestTool{Method: "POST", URL: "{base}/items/{id}", Parameters: map[string]any{"type": "object"}},
			args:     `{"id":"7","name":"x","count":12345678901234567890,"tags":["a"]}`,
			wantPath: "/items/7",
			wantBody: `{"name":"x","count":12345678901234567890,"tags":["a"]}`,
		},
		{
			name: "a body template takes whole values for exact placeholders and text elsewhere",
			tool: config.RestTool{Method: "POST", URL: "{base}/chat",
				Parameters: map[string]any{"type": "object", "properties": map[string]any{
					"question": map[string]any{"type": "string"}, "opts": map[string]any{"type": "object"},
					"n": map[string]any{"type": "integer"}, "absent": map[string]any{"type": "string"}}},
				Body: map[string]any{
					"messages": []any{map[string]any{"role": "user", "content": "Q: {question} ({n})"}},
					"options":  "{opts}",
					"count":    "{n}",
					"skip":     "{absent}",
					"literal":  "{not_a_param}",
				}},
			args:     `{"question":"why?","opts":{"t":0.5},"n":2,"extra":"dropped"}`,
			wantPath: "/chat",
			wantBody: `{"messages":[{"role":"user","content":"Q: why? (2)"}],"options":{"t":0.5},"count":2,"literal":"{not_a_param}"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newPeer(t, nil)
			tc.tool.URL = strings.ReplaceAll(tc.tool.URL, "{base}", srv.URL)
			h := newHarness(t, map[string]config.RestTool{"thing": tc.tool}, nil, Options{})
			if got := h.mustOK("rest__thing", tc.args); got != `{"ok":true}` {
				t.Errorf("content = %q", got)
			}
			r := srv.last(t)
			if r.Path != tc.wantPath || r.Query != tc.wantQuery {
				t.Errorf("request = %s?%s, want %s?%s", r.Path, r.Query, tc.wantPath, tc.wantQuery)
			}
			if tc.wantBody == "" {
				if r.Body != "" {
					t.Errorf("body = %s, want none", r.Body)
				}
				return
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			assertSameJSON(t, r.Body, tc.wantBody)
		})
	}
}

func assertSameJSON(t *testing.T, got, want string) {
	t.Helper()
	g, err := tools.DecodeJSON([]byte(got))
	if err != nil {
		t.Fatalf("body %q is not JSON: %v", got, err)
	}
	w, _ := tools.DecodeJSON([]byte(want))
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("body = %s\nwant   %s", gb, wb)
	}
}

func TestSchemaFromPlaceholdersRequiresThem(t *testing.T) {
	t.Parallel()
	srv := newPeer(t, nil)
	h := newHarness(t, map[string]config.RestTool{"user": {URL: srv.URL + "/users/{id}"}}, nil, Options{})
	out := h.exec("rest__user", `{}`)
	if out.Failure != tools.FailInvalidArgs || !strings.Contains(out.Content, "id") {
		t.Fatalf("missing placeholder: failure %q, content %q", out.Failure, out.Content)
	}
	if srv.count() != 0 {
		t.Error("a request was sent with a missing placeholder")
	}
	h.mustOK("rest__user", `{"id":"42"}`)
	tool, _ := h.o.Tool("rest__user")
	if tool.Remote != "user" {
		t.Errorf("Remote = %q", tool.Remote)
	}
}

func TestConfiguredHeadersAreSentButNeverShown(t *testing.T) {
	t.Parallel()
	const token = "s3cr3t-token-value"
	srv := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		// A careless API that echoes the request's headers in its error.
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "denied: %d headers", len(r.Header))
	})
	h := newHarness(t, map[string]config.RestTool{"private": {
		URL:     srv.URL + "/private",
		Headers: map[string]config.Secret{"Authorization": "Bearer " + token, "X-Api-Key": token},
	}}, nil, Options{})
	out := h.exec("rest__private", `{}`)
	r := srv.last(t)
	if got := r.Header.Get("Authorization"); got != "Bearer "+token {
		t.Errorf("Authorization sent = %q", got)
	}
	if got := r.Header.Get("X-Api-Key"); got != token {
		t.Errorf("X-Api-Key sent = %q", got)
	}
	if !out.IsError || !strings.HasPrefix(out.Content, "HTTP 401 Unauthorized") {
		t.Errorf("outcome = %+v", out)
	}
	if strings.Contains(out.Content, token) || (out.Err != nil && strings.Contains(out.Err.Error(), token)) {
		t.Errorf("the token is in the model's text: %q", out.Content)
	}
	if l := logText(h.obs); strings.Contains(l, token) {
		t.Errorf("the token is in the logs:\n%s", l)
	}
}

func TestFailuresTheModelCanRead(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("é", 4000) // 8000 bytes of two-byte characters
	slow := make(chan struct{})
	t.Cleanup(func() { close(slow) })
	srv := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/boom":
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"error":"database on fire"}`)
		case "/boom-big":
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, big)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-slow:
			}
		}
	})
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	headerTimeout := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 50 * time.Millisecond}}

	tests := []struct {
		name    string
		url     string
		timeout time.Duration
		client  *http.Client
		failure tools.Failure
		want    []string
	}{
		{name: "a 500 is a failure with its status and body", url: srv.URL + "/boom",
			want: []string{"HTTP 500 Internal Server Error", "database on fire"}},
		{name: "a long error body is cut to an excerpt on a character boundary", url: srv.URL + "/boom-big",
			want: []string{"HTTP 502 Bad Gateway", "é", "cut"}},
		{name: "a call past the tool's timeout is stopped", url: srv.URL + "/slow", timeout: 50 * time.Millisecond,
			failure: tools.FailTimeout, want: []string{"did not answer within 50ms"}},
		{name: "a server that does not answer in time is named, not located", url: srv.URL + "/slow", client: headerTimeout,
			failure: tools.FailError, want: []string{"the api service did not answer in time"}},
		{name: "a server that cannot be reached is named, not located", url: closed.URL + "/x",
			failure: tools.FailError, want: []string{"could not connect to the api service (connection refused)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, map[string]config.RestTool{"api": {URL: tc.url, Timeout: config.Duration(tc.timeout)}}, nil,
				Options{Client: tc.client})
			out := h.exec("rest__api", `{}`)
			if out.OK() || out.Failure != tc.failure {
				t.Fatalf("outcome: ok %v failure %q, want failure %q: %s", out.OK(), out.Failure, tc.failure, out.Content)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.Content, w) {
					t.Errorf("content lacks %q: %s", w, out.Content)
				}
			}
			if len(out.Content) > errorExcerpt+200 || !utf8.ValidString(out.Content) {
				t.Errorf("content is %d bytes, valid UTF-8 %v", len(out.Content), utf8.ValidString(out.Content))
			}
			hostFree(t, out.Content, srv.Server)
			hostFree(t, out.Content, closed)
		})
	}
}

func TestOversizedAnswerIsBounded(t *testing.T) {
	t.Parallel()
	srv := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, strings.Repeat("é", 100_000))
	})
	h := newHarness(t, map[string]config.RestTool{"big": {URL: srv.URL}}, nil, Options{MaxResponseBytes: 1001})
	got := h.mustOK("rest__big", `{}`)
	body, note, ok := strings.Cut(got, "\n[")
	if !ok || len(body) != 1000 || !utf8.ValidString(got) {
		t.Fatalf("body %d bytes (valid UTF-8 %v), note %q", len(body), utf8.ValidString(got), note)
	}
	if !strings.Contains(note, "cut at 1000 bytes") {
		t.Errorf("note = %q", note)
	}
}

func TestAnswersTheModelCanRead(t *testing.T) {
	t.Parallel()
	srv := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte{0x89, 'P', 'N', 'G', 0xff, 0xfe, 0x00})
		case "/text":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "  sunny, 21°C\n")
		}
	})
	tests := []struct{ path, want string }{
		{"/empty", "HTTP 204 No Content (no content)"},
		{"/png", "[binary answer: image/png, 7 bytes]"},
		{"/text", "sunny, 21°C"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, map[string]config.RestTool{"x": {URL: srv.URL + tc.path}}, nil, Options{})
			if got := h.mustOK("rest__x", `{}`); got != tc.want {
				t.Errorf("content = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRedirectToAnotherHostDropsConfiguredHeaders(t *testing.T) {
	t.Parallel()
	other := newPeer(t, nil)
	first := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/landed", http.StatusFound)
	})
	h := newHarness(t, map[string]config.RestTool{"hop": {URL: first.URL, Headers: map[string]config.Secret{"X-Api-Key": "k"}}}, nil, Options{})
	h.mustOK("rest__hop", `{}`)
	if got := first.last(t).Header.Get("X-Api-Key"); got != "k" {
		t.Errorf("first host got key %q", got)
	}
	if got := other.last(t).Header.Get("X-Api-Key"); got != "" {
		t.Errorf("the other host got the key %q", got)
	}
}

func TestCallsAfterCloseFail(t *testing.T) {
	t.Parallel()
	srv := newPeer(t, nil)
	p, err := New(map[string]config.RestTool{"x": {URL: srv.URL}}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Call(t.Context(), tools.Call{Name: "rest__x", Arguments: []byte(`{}`)}); err == nil {
		t.Fatal("a call after Close succeeded")
	}
}
