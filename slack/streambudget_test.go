package slack_test

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
)

// Streams and Slack's budgets, at timeScale: chat.startStream and
// chat.stopStream are tier 2 (about 20 a minute for the workspace),
// chat.appendStream tier 4.

const (
	burstMentions = 40
	// burstSpan is how long the forty mentions take, in Slack's time: well
	// within the minute, so that the start budget (20 a minute and a burst
	// of 3) cannot grant more than 20 streams.
	burstSpan = 30 * time.Second
	// startBurst is the bot's default chat.startStream burst.
	startBurst = 3
)

// callsPerMethod counts the emulator's calls by method, and those Slack
// answered 429.
func callsPerMethod(w *bottest.World) (calls map[string]int, limited map[string]int, all, refused int) {
	calls, limited = map[string]int{}, map[string]int{}
	for _, c := range w.Slack.Calls("") {
		calls[c.Method]++
		all++
		if c.Status == 429 {
			limited[c.Method]++
			refused++
		}
	}
	return calls, limited, all, refused
}

func logCalls(t *testing.T, w *bottest.World) (refused int) {
	t.Helper()
	calls, limited, all, refused := callsPerMethod(w)
	for _, m := range slices.Sorted(maps.Keys(calls)) {
		t.Logf("%-28s %4d calls, %d answered 429", m, calls[m], limited[m])
	}
	t.Logf("%d calls, %d answered 429", all, refused)
	return refused
}

// answerLanded is when the answer holding want landed in ch, by the
// emulator's record of the call that carried it.
func answerLanded(w *bottest.World, ch, want string) time.Time {
	for _, c := range w.Slack.Calls("") {
		if c.Status == 200 && c.Error == "" && c.Params.Get("channel") == ch &&
			strings.Contains(c.Params.Get("text")+c.Params.Get("blocks")+c.Params.Get("markdown_text"), want) {
			return c.At
		}
	}
	return time.Time{}
}

// Forty mentions within a minute in auto: the sessions that find a
// chat.startStream token at once stream, at most 20, the others show the
// progress message without waiting for one; Slack refuses no call, and
// every question is answered once. How soon each answer lands after its
// session's end is logged (a figure of the machine, measured in
// BenchmarkAgentSurface).
//
// Not parallel: it is about budgets shared by forty sessions at once.
func TestFortyMentionsInAMinuteInAutoShowAtMostTwentyStreamsAndEveryAnswer(t *testing.T) {
	limits := scaled(emulator.SlackLimits(), func(l emulator.Limit) emulator.Limit { l.PerMinute *= timeScale; return l })
	w := bottest.Start(t, bottest.WithRateLimits(limits), bottest.WithConfig(func(c *config.Config) {
		c.Slack.Display = config.DisplayAuto
		c.Slack.RateLimits = scaled(config.DefaultSlackRateLimits, func(l config.RateLimit) config.RateLimit { l.PerMinute *= timeScale; return l })
		c.Slack.ProgressInterval = config.Duration(200 * time.Millisecond)
		c.Slack.MaxConcurrentSessions = burstMentions
		c.Slack.MaxSessionsPerUser = burstMentions
	}))
	var mu sync.Mutex
	ends := map[string]time.Time{}
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		q := lastUserText(r)
		time.Sleep(300 * time.Millisecond) // the model's time
		mu.Lock()
		ends[q] = time.Now()
		mu.Unlock()
		return llmtest.TextReport("Answer to " + q + ".")
	})
	channelOf := func(i int) string { return fmt.Sprintf("C0BURST%02d", i) }
	threads := map[int]string{}
	every := burstSpan / timeScale / burstMentions
	began := time.Now()
	for i := range burstMentions {
		threads[i] = w.Slack.Mention(channelOf(i), asker, fmt.Sprintf("burst %d", i))
		time.Sleep(every) // the mentions' pace, not an assertion
	}
	// A loaded machine may stretch the burst past the minute's budget: the
	// bound is then what a tier-2 bucket grants over the span taken.
	span := time.Since(began) * timeScale
	most := 20
	if grant := startBurst + int(math.Ceil(20*span.Minutes())); grant > most {
		t.Logf("the mentions took %v of Slack's time: up to %d streams", span.Round(time.Second), grant)
		most = grant
	}
	answered := func(i int) bool {
		return holding(w, channelOf(i), threads[i], fmt.Sprintf("Answer to burst %d.", i)) > 0
	}
	w.Eventually("every mention to be answered", func() bool {
		for i := range burstMentions {
			if !answered(i) {
				return false
			}
		}
		return true
	}, wait.Within(2*time.Minute))

	streams, progress := 0, 0
	var worst time.Duration
	for i := range burstMentions {
		ch, want := channelOf(i), fmt.Sprintf("Answer to burst %d.", i)
		if n := holding(w, ch, threads[i], want); n != 1 {
			t.Errorf("question %d answered %d times; want once", i, n)
		}
		if len(w.Slack.Streams(ch)) > 0 {
			streams++
		} else {
			progress++
		}
		mu.Lock()
		end := ends[fmt.Sprintf("burst %d", i)]
		mu.Unlock()
		if landed := answerLanded(w, ch, want); !landed.IsZero() && !end.IsZero() {
			worst = max(worst, landed.Sub(end))
		}
	}
	if streams > most || streams == 0 || streams+progress != burstMentions {
		t.Errorf("%d streams and %d progress messages; want at most %d streams, the rest progress messages", streams, progress, most)
	}
	if n := len(w.Slack.Calls("chat.startStream")); n != streams {
		t.Errorf("%d chat.startStream calls for %d streams: a session without a token must not ask", n, streams)
	}
	w.Eventually("every stream to end", func() bool {
		for i := range burstMentions {
			for _, s := range w.Slack.Streams(channelOf(i)) {
				if s.Open {
					return false
				}
			}
		}
		return true
	})
	if refused := logCalls(t, w); refused != 0 {
		t.Errorf("Slack answered %d calls 429; want none", refused)
	}
	t.Logf("%d streams, %d progress messages; the slowest answer landed %v after its session's end", streams, progress, worst.Round(time.Millisecond))
}

const (
	endingStreams = 20
	streamSteps   = 8 // progress steps of each session, each a change to append
)

// Twenty streams appending as fast as their budget allows all end at
// once: each stop, at the answer's priority, carries its answer — none
// is starved into "answered below" or refused — and Slack answers no
// call 429. The stops share chat.stopStream's tier-2 budget, so the last
// lands a few of Slack's seconds after the first; the delays are logged.
//
// Not parallel: it is about budgets shared by twenty sessions at once.
func TestTwentyStreamsEndingAtOnceAreNotStarvedByTheirAppends(t *testing.T) {
	limits := scaled(emulator.SlackLimits(), func(l emulator.Limit) emulator.Limit { l.PerMinute *= timeScale; return l })
	w := bottest.Start(t, streamed, bottest.WithRateLimits(limits), bottest.WithConfig(func(c *config.Config) {
		c.Slack.RateLimits = scaled(config.DefaultSlackRateLimits, func(l config.RateLimit) config.RateLimit { l.PerMinute *= timeScale; return l })
		c.Slack.ProgressInterval = config.Duration(100 * time.Millisecond)
		c.Slack.MaxConcurrentSessions = endingStreams
		c.Slack.MaxSessionsPerUser = endingStreams
		a := c.Agents[bottestAgent]
		a.MaxTurns = streamSteps + 2
		a.MaxSessionDuration = config.Duration(5 * time.Minute)
		a.Tools = append(a.Tools, agent.TaskStatusTool)
	}))
	ended := heldFinals(t, w.Model, firstUserText, streamSteps, endingStreams, 50*time.Millisecond, func(q string) string { return "Answer to " + q + "." })
	channelOf := func(i int) string { return fmt.Sprintf("C0ENDING%02d", i) }
	threads := map[int]string{}
	for i := range endingStreams {
		threads[i] = w.Slack.Mention(channelOf(i), asker, fmt.Sprintf("ending %d", i))
	}
	w.Eventually("every stream to end", func() bool {
		for i := range endingStreams {
			s := w.Slack.Streams(channelOf(i))
			if len(s) != 1 || s[0].Open {
				return false
			}
		}
		return true
	}, wait.Within(2*time.Minute))
	ends := ended()
	var first, last time.Time
	for i := range endingStreams {
		ch, want := channelOf(i), fmt.Sprintf("Answer to ending %d.", i)
		s := w.Slack.Streams(ch)[0]
		if !strings.Contains(string(s.Blocks), want) || strings.Contains(s.Markdown, "Answered below") {
			t.Errorf("stream %d ended with %s / %q; want its answer in the stop", i, s.Blocks, s.Markdown)
		}
		if n := holding(w, ch, threads[i], want); n != 1 {
			t.Errorf("question %d answered %d times; want once", i, n)
		}
		end := ends[fmt.Sprintf("ending %d", i)]
		landed := answerLanded(w, ch, want)
		if first.IsZero() || end.Before(first) {
			first = end
		}
		if landed.After(last) {
			last = landed
		}
	}
	st := w.Bots[0].RateStats().Methods
	if st["chat.appendStream"].MaxWait == 0 {
		t.Error("no append ever waited for its budget: the appends did not press on it")
	}
	if refused := logCalls(t, w); refused != 0 {
		t.Errorf("Slack answered %d calls 429; want none", refused)
	}
	t.Logf("appends waited %v at most; stops waited %v at most; the last of %d answers landed %v after the first session ended",
		st["chat.appendStream"].MaxWait.Round(time.Millisecond), st["chat.stopStream"].MaxWait.Round(time.Millisecond), endingStreams,
		last.Sub(first).Round(time.Millisecond))
}

// firstUserText is the first user message the model was sent: the
// question, whatever tool results followed it.
func firstUserText(r *llmtest.Recorded) string {
	for _, m := range r.Messages {
		if m.Role == llm.RoleUser {
			return m.Content
		}
	}
	return ""
}
