package blockkit_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit"
)

// The cost of the voice guard on the way out, once per message sent.

// benchPolicy is a thread's policy: the asker and two participants may be
// pinged, one trusted host, the two reserved ids.
func benchPolicy() blockkit.VoicePolicy {
	return blockkit.VoicePolicy{Pingable: map[string]bool{"U0ASK": true, "U0BOB": true, "U0CAT": true},
		Name: func(string) string { return "Jane" }, TrustedHosts: []string{"images.example.com"},
		ReservedActionIDs: []string{"slackbot_stop", "slackbot_feedback"}}
}

// BenchmarkVoiceProgress is a progress message: a status line, the usage
// and the headend's Stop button.
func BenchmarkVoiceProgress(b *testing.B) {
	stop := slack.NewActionBlock("slackbot_progress", slack.NewButtonBlockElement("slackbot_stop", "session|U0ASK",
		slack.NewTextBlockObject(slack.PlainTextType, "Stop", false, false)))
	m := blockkit.Message{Text: "⏳ Thinking (step 3)…", Blocks: []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "⏳ Thinking (step 3)…\n_Reading the &lt;incident&gt; log_\n• `github__search_code` (2s)", false, false), nil, nil),
		slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, "12,345 tokens · $0.0123", false, false)),
		stop,
	}, Controls: []slack.Block{stop}}
	p := benchPolicy()
	b.ReportAllocs()
	for b.Loop() {
		_ = blockkit.Voice(m, p)
	}
}

// BenchmarkVoiceAnswer13KB is an answer of about 13 KB of corpus Markdown
// with a mention, a link and a broadcast in every paragraph's worth.
func BenchmarkVoiceAnswer13KB(b *testing.B) {
	files, _ := filepath.Glob("testdata/corpus/*.md")
	sort.Strings(files)
	var sb strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		sb.Write(data)
		sb.WriteString("\n\nAsk <@U0ASK> or <@U0EVE>, see <https://evil.example|docs.example.com>, <!here>.\n\n")
		if sb.Len() > 13*1024 {
			break
		}
	}
	msgs := blockkit.FromMarkdown(strings.ToValidUTF8(sb.String()[:13*1024], ""))
	p := benchPolicy()
	b.ReportAllocs()
	b.ReportMetric(float64(len(msgs)), "messages")
	for b.Loop() {
		for _, m := range msgs {
			_ = blockkit.Voice(m, p)
		}
	}
}
