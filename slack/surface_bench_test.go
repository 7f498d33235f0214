package slack_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
)

// The agent surface, stream against message: surfaceSessions mentions at
// once, one per channel, each a session of two model calls (a progress
// line, then the answer) of surfaceTurn each. Per session, from the
// emulator's record of the calls:
//
//   - seen: from the mention to the first thing its asker sees (the
//     progress message, the "eyes" reaction, the assistant status or the
//     stream's start);
//   - shown: from the mention to the message in its thread (the progress
//     message or the stream's start);
//   - answer: from the moment the model's answer left the fake model to
//     the call that put it in Slack (the stream's stop, the progress
//     message's replacement, or a new message);
//   - the Slack calls a session costs, by method.
//
// "stream" and "message" give the headend budgets it never reaches, so
// they compare the two displays themselves; "auto-slack-budgets" keeps
// the bot's default budgets and makes the emulator enforce Slack's tiers,
// so a burst of thirty finds chat.startStream's tier-2 budget: run it
// with -benchtime 1x, as each iteration spends budgets the next would
// find spent.
//
//	go test -run '^$' -bench AgentSurface -benchtime 3x ./slack/
const (
	surfaceSessions = 30
	surfaceTurn     = 300 * time.Millisecond
)

func BenchmarkAgentSurface(b *testing.B) {
	for _, mode := range []struct {
		name    string
		display string
		budgets bool
	}{
		{"stream", config.DisplayStream, false},
		{"message", config.DisplayMessage, false},
		{"auto-slack-budgets", config.DisplayAuto, true},
	} {
		b.Run(mode.name, func(b *testing.B) {
			w := newSurfaceWorld(b, mode.display, mode.budgets)
			var seen, shown, answer []time.Duration
			calls := map[string]int{}
			streams := 0
			for i := range b.N {
				s, m, a, c, n := w.round(b, i)
				seen, shown, answer = append(seen, s...), append(shown, m...), append(answer, a...)
				for m, k := range c {
					calls[m] += k
				}
				streams += n
			}
			b.StopTimer()
			sessions := float64(surfaceSessions * b.N)
			reportQuantiles(b, "seen", seen)
			reportQuantiles(b, "shown", shown)
			reportQuantiles(b, "answer", answer)
			total := 0
			for _, m := range slices.Sorted(maps.Keys(calls)) {
				total += calls[m]
				b.ReportMetric(float64(calls[m])/sessions, m+"/session")
			}
			b.ReportMetric(float64(total)/sessions, "calls/session")
			b.ReportMetric(float64(streams)/sessions, "streamed-share")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func reportQuantiles(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		b.Fatalf("no %s figures", name)
	}
	slices.Sort(ds)
	q := func(p float64) float64 { return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))]) / 1e6 }
	b.ReportMetric(q(0.50), name+"-p50-ms")
	b.ReportMetric(q(0.99), name+"-p99-ms")
}

// surfaceWorld is the bot against the emulator and the fake model, quiet.
type surfaceWorld struct {
	srv  *emulator.Server
	stop context.CancelFunc
	done chan error

	mu   sync.Mutex
	ends map[string]time.Time // by question: when its answer left the model
}

func surfaceChannel(i int) string { return fmt.Sprintf("C0SURF%02d", i) }

func newSurfaceWorld(b *testing.B, display string, budgets bool) *surfaceWorld {
	b.Helper()
	opts := emulator.Options{}
	if budgets {
		opts.RateLimits = emulator.SlackLimits()
	}
	srv, err := emulator.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	srv.AddUser(asker, "ada")
	for i := range surfaceSessions {
		srv.AddChannel(surfaceChannel(i), fmt.Sprintf("surface-%02d", i), true)
	}
	w := &surfaceWorld{srv: srv, done: make(chan error, 1), ends: map[string]time.Time{}}
	model := llmtest.NewServer(b)
	model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		q := firstUserText(r)
		time.Sleep(surfaceTurn) // the model's time
		for _, m := range r.Messages {
			if m.Role == "tool" {
				w.mu.Lock()
				w.ends[q] = time.Now()
				w.mu.Unlock()
				return llmtest.TextReport("Answer to " + q + ".")
			}
		}
		return llmtest.Call(agent.TaskStatusTool, `{"status":"in-progress","done":"","pending":"the answer","now":"Looking it up","ready_for_final_report":true,"need_to_run_more_tools":false}`)
	})
	a := bottest.Agent()
	a.Tools = []string{agent.TaskStatusTool}
	cfg := bottest.Config(srv, a)
	cfg.Slack.SlashCommand, cfg.Slack.Display = "", display
	cfg.Slack.ProgressInterval = config.Duration(time.Second)
	cfg.Slack.MaxConcurrentSessions, cfg.Slack.MaxSessionsPerUser = surfaceSessions, surfaceSessions
	cfg.Slack.ShutdownGrace = config.Duration(10 * time.Second)
	if !budgets {
		cfg.Slack.RateLimits = unreachedRateLimits()
	}
	log := zap.NewNop()
	bot, err := slack.New(slack.Options{Config: cfg, Runner: bottest.Runner(b, model, cfg, log), State: state.NewMemory(), Log: log})
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	w.stop = stop
	go func() { w.done <- bot.Run(ctx) }()
	b.Cleanup(func() {
		w.stop()
		select {
		case <-w.done:
		case <-time.After(30 * time.Second):
			b.Error("the bot did not stop within 30 s")
		}
		_ = srv.Close()
	})
	w.waitFor(b, "the bot to connect", func() bool { return srv.Connections() > 0 })
	return w
}

func (w *surfaceWorld) waitFor(b *testing.B, what string, cond func() bool) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := w.srv.WaitFor(ctx, cond); err != nil {
		b.Fatalf("timed out waiting for %s", what)
	}
}

// seenMethods are the calls that show the asker the bot is on it.
var seenMethods = map[string]bool{"chat.postMessage": true, "chat.startStream": true, "reactions.add": true,
	"assistant.threads.setStatus": true}

// round asks surfaceSessions questions at once and waits until every one
// is answered and the thread settled; it returns each session's figures,
// the calls the round made by method, and how many sessions streamed.
func (w *surfaceWorld) round(b *testing.B, round int) (seen, shown, answer []time.Duration, calls map[string]int, streams int) {
	b.Helper()
	before := len(w.srv.Calls(""))
	sent := map[int]time.Time{}
	question := func(i int) string { return fmt.Sprintf("round %d question %d", round, i) }
	for i := range surfaceSessions {
		sent[i] = time.Now()
		w.srv.Mention(surfaceChannel(i), asker, question(i))
	}
	settled := func() bool {
		for i := range surfaceSessions {
			ch := surfaceChannel(i)
			answered := false
			for _, m := range w.srv.BotMessages(ch) {
				text := string(m.Blocks) + m.Text
				answered = answered || strings.Contains(text, "Answer to "+question(i)+".")
				if strings.Contains(text, "slackbot_stop") {
					return false
				}
			}
			for _, s := range w.srv.Streams(ch) {
				if s.Open {
					return false
				}
			}
			if !answered {
				return false
			}
		}
		return true
	}
	w.waitFor(b, "every question to be answered and its thread settled", settled)
	// The decorations (the reaction's removal, the agent session's last
	// status) follow the answer off its path: the round is over once no
	// call came for a while.
	for last := -1; ; time.Sleep(200 * time.Millisecond) {
		n := len(w.srv.Calls(""))
		if n == last {
			break
		}
		last = n
	}
	all := w.srv.Calls("")[before:]
	calls = map[string]int{}
	for _, c := range all {
		calls[c.Method]++
		if c.Status == 429 {
			calls["429"]++
		}
	}
	streams = calls["chat.startStream"]
	for i := range surfaceSessions {
		ch, want := surfaceChannel(i), "Answer to "+question(i)+"."
		var first, posted, landed time.Time
		for _, c := range all {
			if c.Status != 200 || c.Error != "" || c.Params.Get("channel") != ch && c.Params.Get("channel_id") != ch {
				continue
			}
			if seenMethods[c.Method] && first.IsZero() {
				first = c.At
			}
			if (c.Method == "chat.postMessage" || c.Method == "chat.startStream") && posted.IsZero() {
				posted = c.At
			}
			if landed.IsZero() && strings.Contains(c.Params.Get("text")+c.Params.Get("blocks")+c.Params.Get("markdown_text"), want) {
				landed = c.At
			}
		}
		w.mu.Lock()
		end := w.ends[question(i)]
		w.mu.Unlock()
		if first.IsZero() || posted.IsZero() || landed.IsZero() || end.IsZero() {
			b.Fatalf("session %d: seen %v, shown %v, answered %v, ended %v", i, first, posted, landed, end)
		}
		seen, shown = append(seen, first.Sub(sent[i])), append(shown, posted.Sub(sent[i]))
		answer = append(answer, landed.Sub(end))
	}
	return seen, shown, answer, calls, streams
}
