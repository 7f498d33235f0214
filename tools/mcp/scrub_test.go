package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/tools"
)

// echoingPeer refuses every request the way a careless server does: with
// the address it was asked for, and the credentials it got, in its answer.
func echoingPeer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		http.Error(w, fmt.Sprintf("no MCP here: %s %s (you are %s, %s)", r.Method, r.URL.String(), user, pass), http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAnMCPURLsTokenAndPasswordReachNoErrorAndNoLogLine(t *testing.T) {
	t.Parallel()
	hosts := map[string]string{
		"a server that echoes the request": strings.TrimPrefix(echoingPeer(t).URL, "http://"),
		"a port nobody listens on":         fmt.Sprintf("127.0.0.1:%d", freePort(t)),
	}
	for _, typ := range []string{"http", "sse"} {
		for peer, host := range hosts {
			t.Run(typ+" to "+peer, func(t *testing.T) {
				t.Parallel()
				urlRefused(t, config.MCPServer{Type: typ, URL: "http://user:pa55word@" + host + "/mcp?token=SECRET-TOKEN-123&team=core"})
			})
		}
	}
}

// urlRefused starts cfg's server, which cannot start, and fails the test
// when its URL's token or password appear in the errors or log lines.
func urlRefused(t *testing.T, cfg config.MCPServer) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	reg, orch := setup(t, map[string]config.MCPServer{"docs": cfg},
		Options{Log: zap.New(core), Backoff: []time.Duration{time.Hour}}, tools.Options{Log: zap.New(core)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := orch.Warmup(ctx)
	if err == nil {
		t.Fatal("the server started")
	}
	p, aerr := reg.Acquire("docs")
	if aerr != nil {
		t.Fatal(aerr)
	}
	defer p.Close()
	werr := p.Warmup(ctx)
	// The failure is logged just after it is published.
	wait.Eventually(t, "the failure's log line", func() bool {
		return logs.FilterMessage("MCP server failed to start").Len() > 0
	}, wait.Within(10*time.Second))
	var all strings.Builder
	fmt.Fprintln(&all, err.Error())
	fmt.Fprintln(&all, werr.Error())
	for _, e := range logs.All() {
		fmt.Fprintf(&all, "%s %v\n", e.Message, e.ContextMap())
	}
	for _, secret := range []string{"SECRET-TOKEN-123", "pa55word"} {
		if strings.Contains(all.String(), secret) {
			t.Errorf("%s reached an error or a log line:\n%s", secret, all.String())
		}
	}
}
