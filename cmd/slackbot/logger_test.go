package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
)

func TestTheBotsLoggerRedactsEveryLineAtEveryLevel(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"json", "console"} {
		var buf bytes.Buffer
		log := newLogger(config.Log{Level: "debug", Format: format}, false, &buf)
		log.Debug("refused xoxb-1111-SECRETBOT-aaaa", zap.String("url", "https://mcp.example/mcp?token=SECRETQUERY"))
		log.Warn("failed", zap.Error(errors.New("bad key sk-cli-SECRET999")))
		log.With(zap.String("app", "xapp-1-A111-SECRETAPP-bbbb")).Error("x")
		_ = log.Sync()
		for _, s := range []string{"SECRETBOT", "SECRETQUERY", "SECRET999", "SECRETAPP"} {
			if strings.Contains(buf.String(), s) {
				t.Errorf("%s: %s reached the log:\n%s", format, s, buf.String())
			}
		}
		if n := strings.Count(buf.String(), "[redacted]"); n < 4 {
			t.Errorf("%s: %d redactions, want 4:\n%s", format, n, buf.String())
		}
	}
}
