package slack

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/slack/ratelimit"
)

// progress is a session's progress message: posted when the session is
// taken on, refreshed from the session's events at most every
// slack.progress_interval (less often when many sessions share the
// budget), and finally replaced by the answer, or deleted once the answer
// is posted below it. Events only
// mark it dirty (no I/O on the session's goroutines); one updater goroutine
// talks to Slack, and it is stopped, and waited for, before the answer is
// posted, so no refresh can land after the answer.
//
// What only decorates the question — the assistant status, the "eyes"
// reaction and its removal — never delays the session: it runs on a
// goroutine of its own, which the bot's shutdown waits for as for a
// session.
type progress struct {
	b   *Bot
	req request
	id  string

	mu       sync.Mutex
	ts       string             // the progress message ("" until posted)
	rec      liveRecord         // the message's record in the state store
	begun    bool               // begin has run (the message may have failed to post)
	reacted  bool               // an "eyes" reaction marks the question
	marked   chan struct{}      // closed once the status or reaction call is over; nil before begin
	unmark   context.CancelFunc // gives up a reaction still waiting for its budget
	unmarked bool               // the reaction's removal has begun
	turn     int
	tools    map[string]runningTool // by call id
	now      string                 // task_status's current step
	usage    agentUsage
	extract  bool // reading a large result
	waits    progressWaits
	busy     string // "busy: updates every 20 s" when refreshes are slowed
	dirty    bool
	stopped  bool
	quit     chan struct{}
	finished chan struct{}
	cancel   context.CancelFunc // the updater's calls; nil until start
}

type runningTool struct {
	name  string
	who   string // the sub-agent running it, "" for the session's own
	start time.Time
}

type agentUsage struct {
	tokens int
	cost   float64
}

var errNotAssistant = errors.New("not an assistant thread")

func newProgress(b *Bot, req request, id string) *progress {
	return &progress{b: b, req: req, id: id, tools: map[string]runningTool{}, quit: make(chan struct{}), finished: make(chan struct{})}
}

// begin shows at once that the bot is on it: the assistant status where the
// surface allows it, else a reaction, beside the progress message, which
// does not wait for them.
func (p *progress) begin(ctx context.Context) {
	p.beginWith(ctx, "Working on it…")
}

// queuedHeadline is what a session waiting for its turn shows.
const queuedHeadline = "Queued: the bot is busy with other questions and will start on this one in a moment."

// beginWith is begin with headline as the message's first words; a
// progress message already begun is left as it is.
func (p *progress) beginWith(ctx context.Context, headline string) {
	b := p.b
	p.mu.Lock()
	begun := p.begun
	p.begun = true
	p.mu.Unlock()
	if begun {
		return
	}
	mctx, cancel := context.WithCancel(ratelimit.WithPriority(b.cosmeticCtx(ctx), ratelimit.Cosmetic))
	marked := make(chan struct{})
	p.mu.Lock()
	p.marked, p.unmark = marked, cancel
	p.mu.Unlock()
	p.aside(func() {
		defer close(marked)
		var err error = errNotAssistant
		if strings.HasPrefix(p.req.channel, "D") { // the assistant surface lives in the bot's DMs
			err = b.api.SetAssistantThreadsStatusContext(mctx, slackapi.AssistantThreadsSetStatusParameters{
				ChannelID: p.req.channel, ThreadTS: p.req.threadTS, Status: "is thinking…"})
		}
		if err != nil && p.req.ts != "" && mctx.Err() == nil {
			if b.api.AddReactionContext(mctx, "eyes", slackapi.NewRefToMessage(p.req.channel, p.req.ts)) == nil {
				p.mu.Lock()
				p.reacted = true
				p.mu.Unlock()
			}
		}
	})
	ts, err := b.send(ratelimit.WithPriority(ctx, ratelimit.First), p.req.channel, p.req.threadTS, "", p.render(headline))
	if err != nil {
		b.log.Warn("progress message not posted", zap.Error(slackError(err)))
		return
	}
	p.mu.Lock()
	p.ts = ts
	p.mu.Unlock()
	p.rec.put(ctx, p.b, p.id, p.req.channel, ts)
}

// aside runs f off the session's path, on a goroutine Run waits for
// before it returns; f's calls use the bot's cosmetic context, which the
// shutdown cancels at once, so it never holds the shutdown up.
func (p *progress) aside(f func()) {
	p.b.asides.Add(1)
	go func() {
		defer p.b.asides.Done()
		defer p.b.survive("a progress decoration")
		f()
	}()
}

// cosmeticPatience bounds how long taking the reaction off a question may
// wait for its budget; the shutdown drops it at once.
const cosmeticPatience = 2 * time.Minute

// unreact takes the "eyes" reaction off the question, off the session's
// path: a reaction still waiting for its budget is given up, one on its
// way is waited for, then removed. Once the bot is shutting down, it is
// dropped.
func (p *progress) unreact() {
	p.mu.Lock()
	marked, unmark, started := p.marked, p.unmark, p.unmarked
	p.unmarked = true
	p.mu.Unlock()
	if marked == nil || started {
		return
	}
	unmark()
	b := p.b
	p.aside(func() {
		<-marked
		p.mu.Lock()
		reacted := p.reacted
		p.mu.Unlock()
		if !reacted {
			return
		}
		ctx, cancel := context.WithTimeout(ratelimit.WithPriority(b.cosmeticCtx(b.work), ratelimit.Cosmetic), cosmeticPatience)
		defer cancel()
		if ctx.Err() != nil {
			return
		}
		if err := b.api.RemoveReactionContext(ctx, "eyes", slackapi.NewRefToMessage(p.req.channel, p.req.ts)); err != nil {
			b.log.Debug("reaction not removed", zap.Error(slackError(err)))
		}
	})
}

// queued says the session waits for a free slot.
func (p *progress) queued(ctx context.Context) {
	p.update(ratelimit.WithPriority(ctx, ratelimit.First), p.render(queuedHeadline))
}

// start runs the updater until stop. It refreshes a changed message at
// most every pacer interval: slack.progress_interval, stretched when many
// sessions share chat.update's budget. A refresh waiting for budget is
// abandoned by stop; one already sent is waited for.
func (p *progress) start() {
	ctx, cancel := context.WithCancel(ratelimit.WithPriority(p.b.work, ratelimit.Refresh))
	p.cancel = cancel
	p.b.pace.Join()
	go func() {
		defer close(p.finished)
		defer p.b.pace.Leave()
		defer p.b.survive("a progress refresh")
		tick := time.NewTicker(p.b.cfg.ProgressInterval.D())
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-p.quit:
				return
			case <-tick.C:
			}
			iv := p.b.pace.Interval()
			if time.Since(last) < iv {
				continue
			}
			p.mu.Lock()
			dirty := p.dirty && !p.stopped
			p.dirty = false
			p.busy = slowed(p.b.cfg.ProgressInterval.D(), iv)
			p.mu.Unlock()
			if dirty {
				p.update(ctx, p.render(""))
				last = time.Now()
			}
		}
	}()
}

// stop ends the updater and waits for an update in flight.
func (p *progress) stop() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.stopped = true
	p.mu.Unlock()
	close(p.quit)
	if p.cancel != nil {
		p.cancel()
		<-p.finished
	}
}

// finish settles a progress message whose session never ran (the bot
// stopped while it was queued).
func (p *progress) finish(ctx context.Context) {
	p.conclude(ctx, noteMessage("_Interrupted: the bot was restarting. Ask again in a minute._"))
}

// How long concluding a progress message may take, even once ctx is done:
// first editing it (waiting out rate limits), then, should that fail,
// deleting it.
const (
	concludeEdit   = 15 * time.Second
	concludeDelete = 15 * time.Second
)

// conclude replaces the progress message of a session that never ran with
// note m, even when ctx is already done. A progress message must not stay
// "Queued" with a live Stop button: the edit waits out rate limits, and if
// Slack still does not take it the message is deleted.
func (p *progress) conclude(ctx context.Context, m blockkit.Message) {
	p.unreact()
	ts := p.messageTS()
	if ts == "" {
		return
	}
	base := ratelimit.WithPriority(context.WithoutCancel(ctx), ratelimit.Note)
	ectx, cancel := context.WithTimeout(base, concludeEdit)
	_, err := p.b.send(ectx, p.req.channel, "", ts, m)
	cancel()
	if err == nil {
		return
	}
	p.b.log.Debug("progress message not edited; deleting it", zap.Error(slackError(err)))
	dctx, cancel := context.WithTimeout(base, concludeDelete)
	defer cancel()
	if err := p.remove(dctx, ts); err != nil {
		p.b.log.Warn("progress message not settled", zap.Error(slackError(err)))
	}
}

// remove deletes the message at ts, waiting out rate limits.
func (p *progress) remove(ctx context.Context, ts string) error {
	return withRetry(ctx, func() error {
		_, _, err := p.b.api.DeleteMessageContext(ctx, p.req.channel, ts)
		return err
	})
}

// update replaces the progress message; a refresh that Slack rate-limits
// is skipped, as the next one will carry the news.
func (p *progress) update(ctx context.Context, m blockkit.Message) {
	p.mu.Lock()
	ts := p.ts
	p.mu.Unlock()
	if ts == "" {
		return
	}
	m = p.b.voiced(ctx, m)
	opts := []slackapi.MsgOption{slackapi.MsgOptionText(m.Text, false), slackapi.MsgOptionBlocks(m.Blocks...)}
	if _, _, _, err := p.b.api.UpdateMessageContext(ctx, p.req.channel, ts, opts...); err != nil {
		p.b.log.Debug("progress update skipped", zap.Error(slackError(err)))
	}
}

// replaceWith posts the answer. When chat.update has a token free at once,
// its first message replaces the progress message and the rest follow in
// the thread. Otherwise — or if replacing fails — the answer does not wait
// for one: it is posted as new messages (chat.postMessage's budget is the
// channel's own) and the stale progress message is settled afterwards, at
// a lower priority, within the answer's own time (ctx).
func (p *progress) replaceWith(ctx context.Context, msgs []blockkit.Message) error {
	p.stop()
	defer p.unreact()
	ts := p.messageTS()
	b := p.b
	actx := ratelimit.WithPriority(ctx, ratelimit.Answer)
	if ts == "" {
		_, err := b.deliver(actx, p.req.channel, p.req.threadTS, "", msgs)
		return err
	}
	if paid, ok := b.limiter.TakeNow(actx, "chat.update", p.req.channel, ratelimit.Answer); ok {
		replaced, err := b.deliver(paid, p.req.channel, p.req.threadTS, ts, msgs)
		if err == nil || replaced {
			return err
		}
		b.log.Debug("the answer did not replace the progress message; posting it below", zap.Error(slackError(err)))
	}
	_, err := b.deliver(actx, p.req.channel, p.req.threadTS, "", msgs)
	p.settle(ctx, ts, err == nil)
	return err
}

// settle removes a progress message an answer posted below has made
// stale, or, should that fail (or the answer not have been posted), says
// it is over; an unposted answer's message that cannot be edited is
// deleted, so no Stop button stays live.
func (p *progress) settle(ctx context.Context, ts string, answered bool) {
	sctx := ratelimit.WithPriority(ctx, ratelimit.Settle)
	if answered {
		err := p.remove(sctx, ts)
		if err == nil {
			return
		}
		p.b.log.Debug("stale progress message not deleted", zap.Error(slackError(err)))
	}
	note := "_Answered below._"
	if !answered {
		note = "_The answer could not be posted. Ask again in a minute._"
	}
	_, err := p.b.send(sctx, p.req.channel, "", ts, noteMessage(note))
	if err != nil && !answered {
		err = p.remove(sctx, ts)
	}
	if err != nil {
		p.b.log.Warn("stale progress message not settled", zap.Error(slackError(err)))
	}
}

// observe takes the session's events; it only records them.
func (p *progress) observe(e agent.Event) {
	title := ""
	if e.Kind == agent.EventWaiting && e.Wait != nil { // named before the lock: a name may be looked up
		title = waitTitle(p.b.waitNames(e.Wait))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	who := ""
	if len(e.Path) > 1 {
		who = strings.Join(e.Path[1:], " › ")
	}
	switch e.Kind {
	case agent.EventTurnStarted:
		if who == "" {
			p.turn = e.Turn
		}
	case agent.EventToolStarted:
		p.tools[e.Session+"/"+e.Tool.ID] = runningTool{name: e.Tool.Name, who: who, start: e.Time}
		if e.Tool.Name == agent.ToolOutputTool {
			p.extract = true
		}
		if e.Tool.Status != "" {
			p.now = e.Tool.Status
		}
	case agent.EventToolFinished:
		delete(p.tools, e.Session+"/"+e.Tool.ID)
		if e.Tool.Name == agent.ToolOutputTool {
			p.extract = false
		}
	case agent.EventWaiting:
		if e.Wait == nil {
			return
		}
		p.waits.begin(e.Wait.ID, title)
	case agent.EventResumed:
		if e.Wait == nil {
			return
		}
		p.waits.end(e.Wait.ID)
	case agent.EventTaskStatus:
		if e.Status.Now != "" {
			p.now = e.Status.Now
		}
	case agent.EventLLMCall:
		if e.LLM != nil {
			p.usage.tokens += e.LLM.Usage.Total()
			p.usage.cost += e.LLM.Usage.CostUSD
		}
	default:
		return
	}
	p.dirty = true
}

// render draws the progress message; headline replaces the step line when
// set. The Stop button carries the session's id.
func (p *progress) render(headline string) blockkit.Message {
	p.mu.Lock()
	lines := []string{}
	if headline != "" {
		lines = append(lines, headline)
	} else {
		step := "Thinking"
		if p.turn > 1 {
			step = fmt.Sprintf("Thinking (step %d)", p.turn)
		}
		if p.extract {
			step = "Reading a large result"
		}
		if w := p.waits.headline(); w != "" {
			lines = append(lines, "⏸ "+escape(w)+"…")
		} else {
			lines = append(lines, "⏳ "+step+"…")
		}
		if p.now != "" {
			lines = append(lines, "_"+escape(p.now)+"_")
		}
		var running []runningTool
		for _, t := range p.tools {
			running = append(running, t)
		}
		sort.Slice(running, func(i, j int) bool { return running[i].start.Before(running[j].start) })
		for i, t := range running {
			if i == 5 {
				lines = append(lines, fmt.Sprintf("… and %d more", len(running)-5))
				break
			}
			name := "`" + t.name + "`"
			if t.who != "" {
				name = escape(t.who) + " › " + name
			}
			lines = append(lines, fmt.Sprintf("• %s (%s)", name, time.Since(t.start).Round(time.Second)))
		}
	}
	footer := ""
	if p.usage.tokens > 0 {
		footer = fmt.Sprintf("%s tokens", thousands(p.usage.tokens))
		if p.usage.cost > 0 {
			footer += fmt.Sprintf(" · $%.4f", p.usage.cost)
		}
	}
	if p.busy != "" && headline == "" {
		if footer != "" {
			footer += " · "
		}
		footer += "_" + p.busy + "_"
	}
	p.mu.Unlock()
	text := strings.Join(lines, "\n")
	blocks := []slackapi.Block{slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, text, false, false), nil, nil)}
	if footer != "" {
		blocks = append(blocks, slackapi.NewContextBlock("", slackapi.NewTextBlockObject(slackapi.MarkdownType, footer, false, false)))
	}
	stop := slackapi.NewButtonBlockElement(stopAction, stopValue(p.id, p.req.user), slackapi.NewTextBlockObject(slackapi.PlainTextType, "Stop", false, false))
	stop.Style = slackapi.StyleDanger
	controls := slackapi.NewActionBlock("slackbot_progress", stop)
	blocks = append(blocks, controls)
	return blockkit.Message{Text: lines[0], Blocks: blocks, Controls: []slackapi.Block{controls}}
}

// escape keeps text from being read as Slack markup: no mention, link or
// broadcast can be written with it.
func escape(s string) string { return markupEscaper.Replace(s) }

var markupEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// thousands writes n with thousands separators, as Slack users read numbers.
func thousands(n int) string { return english.Sprintf("%d", n) }

var english = message.NewPrinter(language.English)

// messageTS is the progress message's timestamp, "" until it is posted.
func (p *progress) messageTS() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ts
}
