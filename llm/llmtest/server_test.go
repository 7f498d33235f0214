package llmtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestChunksNeverSplitARune(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		size int
		want []string
	}{
		{"", 5, nil},
		{"abcdefghij", 0, []string{"abcde", "fghij"}},
		{"abcdefg", 3, []string{"abc", "def", "g"}},
		{"aé✓b", 2, []string{"a", "é", "✓", "b"}},
		{"✓✓", 1, []string{"✓", "✓"}},
	}
	for _, tt := range tests {
		if got := chunks(tt.in, tt.size); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("chunks(%q, %d) = %q, want %q", tt.in, tt.size, got, tt.want)
		}
	}
}

func post(t *testing.T, s *Server, path, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

const minimalOpenAI = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`

func TestEmptyScriptAnswers500AndRaisesTheFlag(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	res := post(t, s, "/v1/chat/completions", minimalOpenAI, nil)
	if res.StatusCode != 500 || !s.Exhausted() {
		t.Errorf("status %d, exhausted %v", res.StatusCode, s.Exhausted())
	}
}

func TestResponderAnswersOnceTheScriptIsUsed(t *testing.T) {
	t.Parallel()
	s := NewServer(t, Reply{Text: "scripted"})
	s.Respond(func(r *Recorded) Reply { return Reply{Text: "dynamic for " + r.Model} })
	for i, want := range []string{"scripted", "dynamic for m"} {
		res := post(t, s, "/v1/chat/completions", minimalOpenAI, nil)
		var c oaCompletion
		if err := decodeBody(res, &c); err != nil || *c.Choices[0].Message.Content != want {
			t.Errorf("reply %d = %+v (%v)", i, c, err)
		}
	}
	if s.Exhausted() {
		t.Error("exhausted with a responder set")
	}
}

func TestBothAuthHeadersAreAccepted(t *testing.T) {
	t.Parallel()
	s := NewServer(t, Reply{}, Reply{}, Reply{})
	post(t, s, "/v1/chat/completions", minimalOpenAI, map[string]string{"Authorization": "Bearer k1"})
	post(t, s, "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, map[string]string{"X-Api-Key": "k2"})
	post(t, s, "/openai/v1/chat/completions/", minimalOpenAI, nil)
	reqs := s.Requests()
	if reqs[0].APIKey != "k1" || reqs[1].APIKey != "k2" || reqs[2].APIKey != "" || reqs[2].Format != FormatOpenAI {
		t.Errorf("keys %q %q %q, format %q", reqs[0].APIKey, reqs[1].APIKey, reqs[2].APIKey, reqs[2].Format)
	}
}

func TestWaitContextGivesUpWithTheContext(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.WaitContext(ctx, 1); err != context.Canceled {
		t.Errorf("err = %v", err)
	}
}

func TestRawBodyIsSentVerbatim(t *testing.T) {
	t.Parallel()
	s := NewServer(t, Reply{Raw: "<html>oops", ContentType: "text/html"})
	res := post(t, s, "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, nil)
	var b strings.Builder
	_, _ = ioCopy(&b, res)
	if res.StatusCode != 200 || b.String() != "<html>oops" || res.Header.Get("Content-Type") != "text/html" {
		t.Errorf("%d %q %q", res.StatusCode, b.String(), res.Header.Get("Content-Type"))
	}
}

func decodeBody(res *http.Response, v any) error {
	return json.NewDecoder(res.Body).Decode(v)
}

func ioCopy(w io.Writer, res *http.Response) (int64, error) { return io.Copy(w, res.Body) }
