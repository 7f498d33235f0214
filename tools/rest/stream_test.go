package rest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
)

func TestJSONStream(t *testing.T) {
	t.Parallel()
	tokens := &config.RestStreaming{Mode: "json-stream", LinePrefix: "data: ", DiscriminatorField: "type",
		TokenValue: "token", TokenField: "text", DoneValue: "done"}
	answer := &config.RestStreaming{Mode: "json-stream", DiscriminatorField: "event", DoneValue: "end", AnswerField: "answer"}
	tests := []struct {
		name    string
		st      *config.RestStreaming
		body    string
		hang    bool // keep the stream open after body
		isError bool
		want    []string
	}{
		{name: "token lines are joined into the answer", st: tokens,
			body: "data: {\"type\":\"start\"}\n\n: keep-alive\ndata: {\"type\":\"token\",\"text\":\"Hel\"}\ndata: not json\n" +
				"data: {\"type\":\"token\",\"text\":\"lo\"}\ndata: {\"type\":\"done\"}\ndata: {\"type\":\"token\",\"text\":\"late\"}\n",
			want: []string{"Hello"}},
		{name: "the done line's answer field is the whole answer", st: answer,
			body: "{\"event\":\"progress\",\"pct\":50}\n{\"event\":\"end\",\"answer\":\"42 is the answer\"}\n",
			want: []string{"42 is the answer"}},
		{name: "a stream that ends without its done line keeps what arrived, with a note", st: tokens,
			body: "data: {\"type\":\"token\",\"text\":\"partial ans\"}\n",
			want: []string{"partial ans", "ended before its last line", "incomplete"}},
		{name: "a stream that ends before any answer is a failure", st: tokens,
			body: "data: {\"type\":\"start\"}\n", isError: true,
			want: []string{"before any answer arrived"}},
		{name: "a stream past its byte limit keeps what arrived, with a note",
			st: &config.RestStreaming{Mode: "json-stream", DiscriminatorField: "type", TokenValue: "token",
				TokenField: "text", DoneValue: "done", MaxBytes: 100},
			body: strings.Repeat("{\"type\":\"token\",\"text\":\"ab\"}\n", 20),
			want: []string{"abab", "grew past 100 bytes"}},
		{name: "a stream past its timeout keeps what arrived, with a note",
			st: &config.RestStreaming{Mode: "json-stream", DiscriminatorField: "type", TokenValue: "token",
				TokenField: "text", DoneValue: "done", Timeout: config.Duration(100 * time.Millisecond)},
			body: "{\"type\":\"token\",\"text\":\"so far\"}\n", hang: true,
			want: []string{"so far", "did not finish within 100ms"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, tc.body)
				w.(http.Flusher).Flush()
				if tc.hang {
					<-r.Context().Done()
				}
			})
			h := newHarness(t, map[string]config.RestTool{"chat": {Method: "POST", URL: srv.URL, Streaming: tc.st,
				Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}}, nil, Options{})
			out := h.exec("rest__chat", `{"q":"hi"}`)
			if out.Failure != "" || out.IsError != tc.isError {
				t.Fatalf("failure %q, IsError %v: %s", out.Failure, out.IsError, out.Content)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.Content, w) {
					t.Errorf("content lacks %q: %q", w, out.Content)
				}
			}
			if strings.Contains(out.Content, "late") {
				t.Errorf("lines after the done line were read: %q", out.Content)
			}
		})
	}
}

func TestStreamingToolOutlastsItsStreamTimeout(t *testing.T) {
	t.Parallel()
	e, err := restEndpoint("s", config.RestTool{URL: "http://h", Timeout: config.Duration(time.Second),
		Streaming: &config.RestStreaming{Timeout: config.Duration(time.Minute)}})
	if err != nil {
		t.Fatal(err)
	}
	if e.tool.Timeout <= time.Minute {
		t.Errorf("tool timeout %s would cut the stream before its own timeout", e.tool.Timeout)
	}
}
