package rest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
)

// seen is one request as the test server received it.
type seen struct {
	Method string
	Path   string // escaped, as sent
	Query  string
	Header http.Header
	Body   string
}

// peer is a test server that records what it receives.
type peer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

// newPeer starts a server that records each request and answers with h
// (nil: 200 with a small JSON object).
func newPeer(t *testing.T, h http.HandlerFunc) *peer {
	t.Helper()
	p := &peer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.reqs = append(p.reqs, seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(b)})
		p.mu.Unlock()
		if h == nil {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"ok":true}`)
			return
		}
		h(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// last is the latest request received.
func (p *peer) last(t *testing.T) seen {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.reqs) == 0 {
		t.Fatal("the server received no request")
	}
	return p.reqs[len(p.reqs)-1]
}

func (p *peer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.reqs)
}

// logs is an observed logger at debug level.
func logs() (*zap.Logger, *observer.ObservedLogs) {
	core, obs := observer.New(zapcore.DebugLevel)
	return zap.New(core), obs
}

// logText is every observed line with its fields, for searching.
func logText(obs *observer.ObservedLogs) string {
	var b strings.Builder
	for _, e := range obs.All() {
		fmt.Fprintf(&b, "%s %v\n", e.Message, e.ContextMap())
	}
	return b.String()
}

// harness drives a provider through the orchestrator, as a session does.
type harness struct {
	t   *testing.T
	p   *Provider
	o   *tools.Orchestrator
	obs *observer.ObservedLogs
}

func newHarness(t *testing.T, rest map[string]config.RestTool, apis map[string]config.OpenAPI, opts Options) *harness {
	t.Helper()
	log, obs := logs()
	opts.Log = log
	p, err := New(rest, apis, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	o := tools.New(context.Background(), tools.Options{Log: log}, p)
	t.Cleanup(func() { _ = o.Close() })
	return &harness{t: t, p: p, o: o, obs: obs}
}

func (h *harness) exec(name, args string) tools.Outcome {
	h.t.Helper()
	return h.o.Execute(context.Background(), "call-1", name, args, 0)
}

// mustOK fails unless the call succeeded, and returns its content.
func (h *harness) mustOK(name, args string) string {
	h.t.Helper()
	out := h.exec(name, args)
	if !out.OK() {
		h.t.Fatalf("%s(%s) failed (%s): %s", name, args, out.Failure, out.Content)
	}
	return out.Content
}

// hostFree fails when text names the test server's host or URL.
func hostFree(t *testing.T, text string, srv *httptest.Server) {
	t.Helper()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, bad := range []string{srv.URL, host, "127.0.0.1", "localhost", "http://"} {
		if strings.Contains(text, bad) {
			t.Errorf("the model's text names %q: %s", bad, text)
		}
	}
}
