package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
)

// writePeer is a REST endpoint over loopback that counts the POSTs it got,
// configured as rest__write with approval: writes.
func writePeer(t *testing.T) (*atomic.Int32, string) {
	t.Helper()
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)
	return &posts, "rest_tools:\n  write:\n    description: Writes a note.\n    method: POST\n    url: " + srv.URL + "/notes/{text}\n    approval: writes\n"
}

const writingAgent = "---\ndescription: Test agent\nmodels: [fake/m1]\nmax_turns: 3\ntools: [\"rest__*\"]\noutput:\n  format: markdown\n---\nYou write notes.\n"

func writeScript(t *testing.T) *llmtest.Server {
	return llmtest.NewServer(t, llmtest.Call("rest__write", `{"text":"<!channel> hi"}`),
		llmtest.Report(config.FormatMarkdown, agent.StatusSuccess, "Done."))
}

// toolResult is what the model read after its call.
func toolResult(t *testing.T, srv *llmtest.Server) string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" {
			return m.Content
		}
	}
	t.Fatal("no tool result")
	return ""
}

// runWriting runs the subcommand args[0] with the rest of args against a
// writing agent whose tool is a fresh writePeer, reading in. It returns the
// peer's POST count, the scripted model, stdout and stderr.
func runWriting(t *testing.T, in io.Reader, args ...string) (*atomic.Int32, *llmtest.Server, string, string) {
	t.Helper()
	posts, tool := writePeer(t)
	srv := writeScript(t)
	cfg := setupAgent(t, srv, writingAgent, tool)
	var out, errb bytes.Buffer
	if err := run(context.Background(), append([]string{args[0], "--config", cfg}, args[1:]...), in, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	return posts, srv, out.String(), errb.String()
}

func TestAskAsksBeforeAToolWrites(t *testing.T) {
	t.Parallel()
	// A pipe is what a script or CI gives: a file, but no terminal.
	pipe := func(t *testing.T) *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		_ = w.Close()
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	t.Run("with no terminal the call is denied, saying why", func(t *testing.T) {
		t.Parallel()
		posts, srv, _, _ := runWriting(t, pipe(t), "ask", "--agent", "helper", "note it")
		if got := toolResult(t, srv); !strings.Contains(got, "there is no terminal to ask on") || posts.Load() != 0 {
			t.Fatalf("model read %q, posts %d", got, posts.Load())
		}
	})
	t.Run("--approve runs the tools it lists without asking", func(t *testing.T) {
		t.Parallel()
		posts, _, _, errb := runWriting(t, pipe(t), "ask", "--agent", "helper", "--approve", "github__*,rest__wr*", "note it")
		if posts.Load() != 1 || strings.Contains(errb, "Run it?") {
			t.Fatalf("posts %d; stderr:\n%s", posts.Load(), errb)
		}
	})
	t.Run("at a terminal the person is shown the call and answers", func(t *testing.T) {
		t.Parallel()
		for _, tt := range []struct {
			answer string
			posts  int32
			model  string
		}{{"y", 1, `"ok":true`}, {"n", 0, "The user denied this call; do not retry it."}} {
			posts, srv, _, e := runWriting(t, strings.NewReader("maybe\n"+tt.answer+"\n"), "ask", "--agent", "helper", "note it")
			if posts.Load() != tt.posts || !strings.Contains(toolResult(t, srv), tt.model) {
				t.Fatalf("answer %s: posts %d, model read %q", tt.answer, posts.Load(), toolResult(t, srv))
			}
			if !strings.Contains(e, "rest__write (rest write): Writes a note.") || !strings.Contains(e, `"text": "<!channel> hi"`) || strings.Count(e, "Run it?") != 2 {
				t.Fatalf("stderr:\n%s", e)
			}
		}
	})
	t.Run("chat reads the answer from the same input as the questions", func(t *testing.T) {
		t.Parallel()
		posts, _, out, errb := runWriting(t, strings.NewReader("note it\ny\n"), "chat", "--agent", "helper")
		if posts.Load() != 1 || out != "Done.\n" {
			t.Fatalf("posts %d, stdout %q\n%s", posts.Load(), out, errb)
		}
	})
}
