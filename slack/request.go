package slack

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
)

// A request's life, top to bottom: who asks (their organisation), which
// agent answers (route), whether it fits (admit: the person's cap, the
// queue, the budgets), where the answer goes (the slash command's thread),
// then its turn (the thread, a session slot) while its display (a
// progress message or a streamed message) shows, the session itself, and
// the answer delivered by the display.

// Kinds of request, as routing rules name them.
const (
	kindMention = "mentions"
	kindDM      = "dms"
	kindSlash   = "slash"
)

// request is one question for an agent, whatever way it came.
type request struct {
	kind     string
	channel  string
	user     string
	text     string
	ts       string // the user's message ("" for the slash command)
	threadTS string // where the answer goes ("" for the slash command: a new message)
	followup bool
	// files are the files attached to the message (files.go).
	files []attachedFile
	// team and enterprise are the asker's as the payload tells them ("" where
	// it does not).
	team, enterprise string
}

// run is one session answering one request.
type run struct {
	b       *Bot
	req     request
	id      string
	agent   *config.Agent
	cancel  context.CancelFunc
	stopper string // who pressed Stop ("" while nobody did), b.mu held
	// received is when the request arrived, for the end-to-end latency.
	received time.Time
	// interrupted is set when the bot stops it at shutdown.
	interrupted atomic.Bool
	display     display
	// admission is what the question holds from admission to its end.
	admission *admission
	// decisions are the approvals decided in the session (approval.go).
	decisions decisionLog
}

// start handles a request on a goroutine of its own.
func (b *Bot) start(req request) {
	if b.closing.Load() {
		return
	}
	b.sessions.Add(1)
	go func() {
		defer b.sessions.Done()
		defer b.recovered(b.work, nil) // before a session exists
		b.handle(req)
	}()
}

// handle takes a request from its arrival to its answer.
func (b *Bot) handle(req request) {
	received := time.Now()
	ctx := b.work
	log := b.log.With(zap.String("kind", req.kind), zap.String("channel", req.channel), zap.String("user", req.user))
	if !b.ownOrg(ctx, req.user, req.team, req.enterprise) {
		b.refuseForeign(ctx, req.channel, req.user)
		return
	}
	a, why := b.route(ctx, req)
	if a == nil {
		log.Info("request refused", zap.String("why", why))
		b.reject(ctx, req)
		return
	}
	adm, ok := b.admit(ctx, req, a)
	if !ok {
		return
	}
	defer adm.release()
	ctx = withVoice(ctx, req, a)
	if strings.TrimSpace(req.text) == "" && len(req.files) == 0 {
		req.text = "Hello!"
	}
	r := &run{b: b, req: req, agent: a, admission: adm, received: received, id: adm.id}
	defer b.recovered(ctx, r)
	if req.kind == kindSlash {
		if err := r.openSlashThread(ctx); err != nil {
			log.Warn("slash command answer could not be posted", zap.Error(slackError(err)))
			return
		}
	}
	r.display = b.newDisplay(r.req, r.id)
	defer r.display.forget(ctx)
	// The session can be stopped from the moment it shows, while it still
	// waits for its turn too.
	sctx, stopWatching := r.stoppable(ctx)
	defer stopWatching()
	if !adm.takeThread(sctx, r.req.channel, r.req.threadTS, r.display) {
		r.endQueued(ctx, log)
		return
	}
	r.display.begin(ctx)
	if !adm.takeSlot(sctx, r.display) {
		r.endQueued(ctx, log)
		return
	}
	adm.running()
	r.execute(sctx, log)
}

// endQueued settles the display of a session that never ran: it
// was stopped while queued, or the bot is shutting down.
func (r *run) endQueued(ctx context.Context, log *zap.Logger) {
	if stopper := r.stoppedBy(); stopper != "" && ctx.Err() == nil {
		log.Info("stopped while queued", zap.String("session", r.id), zap.String("by", stopper))
		r.display.conclude(ctx, noteMessage(fmt.Sprintf("_Stopped by <@%s>._", stopper)))
		return
	}
	r.display.finish(ctx)
}

// execute runs the session and delivers its answer through its display.
func (r *run) execute(ctx context.Context, log *zap.Logger) {
	b := r.b
	started := time.Now()
	// The thread is the bot's from now on: a reply in it while the answer
	// is being written is a follow-up, which waits for this session.
	_ = b.marks.mark(ctx, threadKey(r.req.channel, r.req.threadTS), threadTTL)
	// The session's clock is running: reading the thread counts against
	// max_session_duration, and cannot take longer.
	limit := cmp.Or(r.agent.MaxSessionDuration.D(), config.DefaultMaxSessionDuration)
	hctx, hcancel := context.WithDeadline(ctx, started.Add(limit))
	history, abandoned, shared := b.history(hctx, r.req, r.display.messageTS())
	files := r.attachments(hctx, log)
	hcancel()
	b.settleLeftovers(ctx, r.req, abandoned)
	history, dropped := agent.TrimHistory(r.agent, history, r.req.text)
	if dropped > 0 {
		log.Info("thread history trimmed to the model's window", zap.Int("dropped", dropped))
	}
	r.display.start()
	blind := r.watchBlind(files)
	obs := agent.Tee(r.display.observe, b.metrics.Observer(), b.tracer.Observer(), blind.observe())
	if b.watch != nil {
		where := Thread{Channel: r.req.channel, TS: r.req.threadTS}
		obs = agent.Tee(obs, func(e agent.Event) { b.watch(where, e) })
	}
	res := b.runner.Run(ctx, agent.Input{Agent: r.agent, Format: config.FormatSlackBlockKit, History: history,
		Prompt: b.withViewContext(ctx, r.req), Files: files, Tools: r.threadTools(shared), Observer: obs, SessionID: r.id, Started: started,
		Approver: r.approver(), Elicitor: elicitor{r: r, ctx: ctx}})
	r.admission.spend(context.WithoutCancel(ctx), res.Usage)
	// No update may land after the answer: the updater is
	// stopped, and waited for, first.
	r.display.stop()
	blind.tell(ctx, log)
	r.answer(ctx, log, res, started)
}
