package mcp

import (
	"strings"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/redact"
)

// scrubbed returns err with the server's URL shown as redact.URL shows it
// and any other credential taken out of its text, so that a token in the
// URL's query or userinfo reaches no log line, check row or caller.
// errors.Is and errors.As still reach the cause.
func scrubbed(cfg config.MCPServer, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if cfg.URL != "" {
		msg = strings.ReplaceAll(msg, cfg.URL, redact.URL(cfg.URL))
		for _, s := range redact.Secrets(cfg.URL) {
			msg = strings.ReplaceAll(msg, s, redact.Mark)
		}
	}
	msg = redact.String(msg)
	if msg == err.Error() {
		return err
	}
	return llm.RedactedError(msg, err)
}
