package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/slack/ratelimit"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/tools"
)

// run is one session answering one request.
type run struct {
	b       *Bot
	req     request
	id      string
	agent   *config.Agent
	cancel  context.CancelFunc
	stopper string // who pressed Stop ("" while nobody did)
	// received is when the request arrived, for the end-to-end latency.
	received time.Time
	// interrupted is set when the bot stops it at shutdown.
	interrupted atomic.Bool
	// leased is set once lockThread has claimed the thread in the store:
	// its unlock then gives back the session's slot with the lease.
	leased   bool
	progress *progress
	// admission is what the question holds from admission to its end.
	admission *admission
}

// start checks a request and runs its session on a goroutine of its own.
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
	if strings.TrimSpace(req.text) == "" {
		req.text = "Hello!"
	}
	r := &run{b: b, req: req, agent: a, admission: adm, received: received, id: newSessionID(req.channel, req.ts)}
	defer b.recovered(ctx, r)
	// A slash command's answer starts a message of its own in the channel
	// (or the asker's DM when the bot is not in the channel).
	if req.kind == kindSlash {
		if err := r.openSlashThread(ctx); err != nil {
			log.Warn("slash command answer could not be posted", zap.Error(slackError(err)))
			return
		}
	}
	// A session waiting for another replica's lease shows "queued".
	r.progress = newProgress(b, r.req, r.id)
	defer r.progress.forget(ctx)
	unlock, slotted := b.lockThread(ctx, r)
	defer unlock()
	// The session can be stopped from the moment its progress message
	// shows the Stop button, while it still waits for a slot too.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.cancel = cancel
	b.mu.Lock()
	b.running[r.id] = r
	b.mu.Unlock()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		defer b.survive("Stop polling")
		r.watchStops(sctx)
	}()
	defer func() {
		cancel()
		<-watched
		b.mu.Lock()
		delete(b.running, r.id)
		b.mu.Unlock()
	}()
	r.progress.begin(ctx)
	release, ok := b.takeSlot(sctx, r, slotted)
	if !ok {
		if stopper := r.stoppedBy(); stopper != "" && ctx.Err() == nil {
			log.Info("stopped while queued", zap.String("session", r.id), zap.String("by", stopper))
			r.progress.conclude(ctx, noteMessage(fmt.Sprintf("_Stopped by <@%s>._", stopper)))
			return
		}
		r.progress.finish(ctx)
		return
	}
	defer release()
	adm.running()
	r.execute(sctx, log)
}

// stoppedBy is who clicked Stop on the session, "" while nobody has.
func (r *run) stoppedBy() string {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	return r.stopper
}

// sessionSlots names the state store's semaphore of running sessions:
// max_concurrent_sessions holds across every replica sharing the store.
const sessionSlots = "sessions"

// slotPoll is how often a queued session asks for a slot again.
const slotPoll = 200 * time.Millisecond

// takeSlot waits for one of max_concurrent_sessions — a slot in the state
// store, renewed while the session runs so a replica that dies frees its
// slots within state.lease_ttl — showing "queued" while it waits; held
// means lockThread already took it. It returns the release, or false when
// the bot is stopping. The store's slot of a session holding a thread's
// lease is given back with the lease, on one trip.
func (b *Bot) takeSlot(ctx context.Context, r *run, held bool) (release func(), ok bool) {
	limit := max(b.cfg.MaxConcurrentSessions, 1)
	began := time.Now()
	unqueue := func() {}
	defer func() { unqueue() }()
	queued := false
	var failing time.Time // since when the store has been failing
	for !held {
		ok, err := b.state.Acquire(ctx, sessionSlots, r.id, limit, b.leaseTTL)
		if err != nil && ctx.Err() != nil {
			return nil, false // stopped or shutting down: not the store's failure
		}
		b.storeResult(storeSlots, err)
		if err == nil {
			failing = time.Time{}
		} else if failing.IsZero() {
			failing = time.Now()
		}
		if ok {
			break
		}
		if err != nil && (b.storeDown() || time.Since(failing) >= b.patience) {
			// A store that cannot count must not stop the bot: this
			// replica's own sessions still take turns below.
			b.storeGaveUp()
			b.fallback("session slots unavailable; counting in this process only", zap.String("session", r.id))
			break
		}
		if err != nil {
			b.log.Debug("state store call failed; retrying", zap.String("calls", storeSlots), zap.Duration("in", slotPoll))
		}
		if !queued && err == nil {
			r.progress.queued(ctx)
			queued = true
			unqueue = b.metrics.SessionQueued()
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(slotPoll):
		}
	}
	// The process's own bound too, so a store that stopped answering still
	// leaves at most max_concurrent_sessions running here.
	select {
	case b.slots <- struct{}{}:
	default:
		if !queued {
			r.progress.queued(ctx)
			queued = true
			unqueue = b.metrics.SessionQueued()
		}
		select {
		case b.slots <- struct{}{}:
		case <-ctx.Done():
			_ = b.state.Release(context.WithoutCancel(ctx), sessionSlots, r.id)
			return nil, false
		}
	}
	unqueue()
	landed := b.metrics.SessionStarted(time.Since(began))
	quit, renewed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(renewed)
		defer b.survive("slot renewal")
		if held {
			return // lockThread renews the slot it took with the lease
		}
		t := time.NewTicker(b.leaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				_, err := b.state.Acquire(context.WithoutCancel(ctx), sessionSlots, r.id, limit, b.leaseTTL)
				b.storeResult(storeSlots, err)
			}
		}
	}()
	return func() {
		landed()
		close(quit)
		<-renewed
		<-b.slots
		if !r.leased {
			b.storeResult(storeSlots, b.state.Release(context.WithoutCancel(ctx), sessionSlots, r.id))
		}
	}, true
}

// execute runs the session and posts its answer in place of the progress
// message.
func (r *run) execute(ctx context.Context, log *zap.Logger) {
	b := r.b
	started := time.Now()
	// The thread is the bot's from now on: a reply in it while the answer
	// is being written is a follow-up, which waits for this session.
	if err := b.state.Mark(ctx, threadKey(r.req.channel, r.req.threadTS), threadTTL); err == nil || ctx.Err() == nil {
		b.storeResult(storeThreads, err) // a Stop that cancelled the call is no failure of the store
	}
	// The session's clock is running: reading the thread counts against
	// max_session_duration, and cannot take longer.
	limit := cmp.Or(r.agent.MaxSessionDuration.D(), config.DefaultMaxSessionDuration)
	hctx, hcancel := context.WithDeadline(ctx, started.Add(limit))
	history, abandoned := b.history(hctx, r.req, r.progress.messageTS())
	hcancel()
	b.closeAbandoned(ctx, r.req.channel, b.withoutLive(ctx, abandoned))
	history, dropped := agent.TrimHistory(r.agent, history, r.req.text)
	if dropped > 0 {
		log.Info("thread history trimmed to the model's window", zap.Int("dropped", dropped))
	}
	r.progress.start()
	obs := agent.Tee(r.progress.observe, b.metrics.Observer(), b.tracer.Observer())
	if b.watch != nil {
		where := Thread{Channel: r.req.channel, TS: r.req.threadTS}
		obs = agent.Tee(obs, func(e agent.Event) { b.watch(where, e) })
	}
	res := b.runner.Run(ctx, agent.Input{Agent: r.agent, Format: config.FormatSlackBlockKit, History: history,
		Prompt: r.req.text, Observer: obs, SessionID: r.id, Started: started})
	r.admission.spend(context.WithoutCancel(ctx), res.Usage)
	// No progress update may land after the answer: the updater is
	// stopped, and waited for, first.
	r.progress.stop()
	rep := res.Report
	// Read once: a Stop click may still come while the answer is written.
	stopper := r.stoppedBy()
	note := ""
	switch {
	case r.interrupted.Load():
		note = "_Interrupted: the bot was restarting. Ask again in a minute._"
	case stopper != "":
		note = fmt.Sprintf("_Stopped by <@%s>._", stopper)
	}
	msgs := rep.Slack
	if len(msgs) == 0 || rep.Synthetic() {
		msgs = answerFromText(rep.Text(), note)
	} else if note != "" {
		msgs = append(msgs, noteMessage(note))
	}
	msgs = r.withFeedback(msgs, rep, stopper)
	pctx, pcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer pcancel()
	status := rep.Status
	switch {
	case r.interrupted.Load():
		status = "interrupted"
	case stopper != "":
		status = "stopped"
	}
	// The record is saved before the answer is posted, so that a click on
	// its feedback buttons finds it.
	rec := state.SessionRecord{ID: r.id, User: r.req.user, Channel: r.req.channel, ThreadTS: r.req.threadTS, Agent: r.agent.Name,
		Status: status, Turns: res.Turns, ToolCalls: res.ToolCalls, InputTokens: res.Usage.InputTokens,
		OutputTokens: res.Usage.OutputTokens, CostUSD: res.Usage.CostUSD, Started: started, Duration: time.Since(started),
		Report: tools.Snippet(rep.Text(), maxRecordedReport)}
	b.storeResult(storeRecords, b.state.PutSession(pctx, rec))
	if err := r.progress.replaceWith(pctx, msgs); err != nil {
		log.Warn("the answer could not be posted", zap.Error(slackError(err)))
	}
	b.storeResult(storeThreads, b.state.Mark(pctx, threadKey(r.req.channel, r.req.threadTS), threadTTL))
	b.metrics.SessionEnded(r.agent.Name, status, time.Since(r.received))
	log.Info("answered", zap.String("session", r.id), zap.String("status", rep.Status), zap.Int("turns", res.Turns),
		zap.Int("messages", len(msgs)), zap.Float64("cost_usd", res.Usage.CostUSD))
}

// stopValue is the Stop button's value: the session and its asker, so
// that a replica not running the session can still tell who may stop it.
func stopValue(session, asker string) string { return session + "|" + asker }

// parseStopValue reads a Stop button's value back; a button of an older
// release carries the session alone, and asker is then "".
func parseStopValue(v string) (session, asker string) {
	session, asker, _ = strings.Cut(v, "|")
	return session, asker
}

// stopRefusal is what someone who may not stop a session is told.
const stopRefusal = "Only the person who asked can stop this."

// stopPoll is how often a session, queued or running, looks in the state
// store for a Stop click another replica recorded.
const stopPoll = time.Second

// stopKey names the stop of session by user in the state store.
func stopKey(session, user string) string { return "stop:" + session + ":" + user }

// stop handles a Stop click: only the asker or an admin may stop. Slack
// hands the click to any replica's connection: a session not running here
// gets the stop through the state store, where the replica running it
// looks for it (watchStops).
func (b *Bot) stop(ctx context.Context, value, user, channel string) {
	id, asker := parseStopValue(value)
	b.mu.Lock()
	r := b.running[id]
	b.mu.Unlock()
	if r != nil {
		asker = r.req.user
	}
	admin := slices.Contains(b.cfg.Admins, user)
	if asker != "" && user != asker && !admin {
		// Posted off the envelope loop: a spent ephemeral budget must not
		// hold up the acks of the envelopes behind this one.
		b.sessions.Add(1)
		go func() {
			defer b.sessions.Done()
			defer b.survive("a Stop refusal")
			_ = b.ephemeral(ratelimit.WithPriority(b.work, ratelimit.Note), channel, user, "", stopRefusal)
		}()
		return
	}
	if r != nil {
		r.stopBy(user)
		return
	}
	// Not here: the replica running it sees the stop within stopPoll. The
	// store is called off the envelope loop.
	b.sessions.Add(1)
	go func() {
		defer b.sessions.Done()
		defer b.survive("a Stop for another replica")
		sctx, cancel := context.WithTimeout(b.work, b.leaseTTL)
		defer cancel()
		if b.settleIfOrphaned(sctx, id) {
			return // no replica runs it: nothing to stop, its message is settled
		}
		err := b.state.Mark(sctx, stopKey(id, user), b.leaseTTL)
		b.storeResult(storeStops, err)
		if err != nil {
			b.log.Warn("a Stop click for a session on another replica could not be recorded", zap.String("session", id), zap.String("by", user))
			return
		}
		b.log.Info("stop recorded for the replica running the session", zap.String("session", id), zap.String("by", user))
	}()
}

// stopBy stops the session on user's behalf; the first to stop it is the
// one named in its answer.
func (r *run) stopBy(user string) {
	r.b.mu.Lock()
	if r.stopper == "" {
		r.stopper = user
	}
	r.b.mu.Unlock()
	r.cancel()
}

// watchStops looks in the state store every stopPoll, until ctx ends, for
// a stop of the session by its asker or an admin that another replica
// recorded, and stops the session when it finds one.
func (r *run) watchStops(ctx context.Context) {
	b := r.b
	who := append([]string{r.req.user}, b.cfg.Admins...)
	slices.Sort(who)
	who = slices.Compact(who)
	t := time.NewTicker(stopPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, user := range who {
			pctx, cancel := context.WithTimeout(ctx, stopPoll)
			stopped, err := b.state.Marked(pctx, stopKey(r.id, user))
			cancel()
			if ctx.Err() != nil {
				return
			}
			b.storeResult(storeStops, err)
			if err != nil {
				break // tried again at the next tick
			}
			if stopped {
				b.log.Info("stopped from another replica", zap.String("session", r.id), zap.String("by", user))
				r.stopBy(user)
				return
			}
		}
	}
}

// route decides which agent answers a request, or why none may: the allow
// list, the deny rules (which cover mentions and DMs as much as anything),
// then the first routing rule for the channel and the kind.
func (b *Bot) route(ctx context.Context, req request) (*config.Agent, string) {
	if len(b.cfg.Allow.Users) > 0 && !slices.Contains(b.cfg.Allow.Users, req.user) {
		return nil, "user not in slack.allow.users"
	}
	name, known := b.channelName(ctx, req.channel)
	if !known && byName(b.cfg.Routing.Deny) {
		return nil, "channel name unknown while slack.routing.deny has rules by name"
	}
	if len(b.cfg.Allow.Channels) > 0 && !matchChannel(b.cfg.Allow.Channels, req.channel, name) {
		return nil, "channel not in slack.allow.channels"
	}
	if matchChannel(b.cfg.Routing.Deny, req.channel, name) {
		return nil, "channel denied by slack.routing.deny"
	}
	for _, rule := range b.cfg.Routing.Rules {
		if (len(rule.On) == 0 || slices.Contains(rule.On, req.kind)) && matchChannel(rule.Channels, req.channel, name) {
			if a := b.conf.Agents[rule.Agent]; a != nil {
				return a, ""
			}
		}
	}
	a, err := b.defaultAgent()
	if err != nil {
		return nil, err.Error()
	}
	return a, ""
}

// reject tells the asker, and only them, that the bot will not answer here.
func (b *Bot) reject(ctx context.Context, req request) {
	err := b.ephemeral(ratelimit.WithPriority(ctx, ratelimit.Note), req.channel, req.user, "", b.cfg.RejectionMessage)
	if err != nil {
		b.log.Debug("rejection not posted", zap.Error(slackError(err)))
	}
}

// lockThread holds the thread for this session: a follow-up waits for the
// session already answering in it. The lease in the state store keeps
// other replicas out too; its first try also takes the session's slot (one
// trip to the store), and slotted reports whether it got it. A store that
// does not answer within the store patience leaves only this process's
// lock; a lease found taken by another owner while renewing is logged, and
// the session goes on. unlock gives back the lease and the slot.
func (b *Bot) lockThread(ctx context.Context, r *run) (unlock func(), slotted bool) {
	channel, ts := r.req.channel, r.req.threadTS
	if ts == "" {
		return func() {}, false
	}
	key := threadKey(channel, ts)
	for {
		b.mu.Lock()
		busy, held := b.threads[key]
		if !held {
			busy = make(chan struct{})
			b.threads[key] = busy
			b.mu.Unlock()
			break
		}
		b.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return func() {}, false
		}
	}
	lease := "lease:" + key
	claim := state.Claim{Lease: lease, Owner: b.owner, Slots: sessionSlots, Holder: r.id,
		Limit: max(b.cfg.MaxConcurrentSessions, 1), TTL: b.leaseTTL}
	r.leased = true
	var ok bool
	first := true
	take := func(ctx context.Context) error {
		var err error
		if first {
			ok, slotted, err = state.ClaimBoth(ctx, b.state, claim)
			first = err != nil
			return err
		}
		ok, err = b.state.Lock(ctx, lease, b.owner, b.leaseTTL)
		return err
	}
	err := b.retryStore(ctx, storeLease, take)
	if err == nil && !ok {
		b.log.Info("another replica holds this thread; waiting", zap.String("thread", key))
		if r.progress != nil {
			r.progress.beginWith(ctx, queuedHeadline)
		}
		t := time.NewTicker(time.Second)
		var failing time.Time // since when the store has been failing
		for ctx.Err() == nil && !ok {
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			if ctx.Err() != nil {
				break
			}
			err = take(ctx)
			if err != nil && ctx.Err() != nil {
				break // shutting down: not the store's failure
			}
			b.storeResult(storeLease, err)
			if err == nil {
				failing = time.Time{}
			} else if failing.IsZero() {
				failing = time.Now()
			}
			if err != nil && (b.storeDown() || time.Since(failing) >= b.patience) {
				b.storeGaveUp()
				break
			}
			if err != nil {
				b.log.Debug("state store call failed; retrying", zap.String("calls", storeLease), zap.Duration("in", time.Second))
			}
		}
		t.Stop()
	}
	if err != nil && ctx.Err() == nil {
		b.fallback("thread lease unavailable; answering with this process's lock only", zap.String("thread", key))
	}
	renewed := make(chan struct{})
	quit := make(chan struct{})
	// The lease lives as long as the session, renewed well before it
	// expires from the moment it was taken; so does the slot taken with
	// it, while the session still posts its progress message and waits
	// for this process's own bound, or another replica could take it and
	// exceed the fleet's cap.
	go func() {
		defer close(renewed)
		defer b.survive("lease renewal")
		t := time.NewTicker(b.leaseTTL / 3)
		defer t.Stop()
		lost := false
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				rctx := context.WithoutCancel(ctx)
				var held bool
				var err error
				if slotted {
					held, _, err = state.ClaimBoth(rctx, b.state, claim)
				} else {
					held, err = b.state.Lock(rctx, lease, b.owner, b.leaseTTL)
				}
				b.storeResult(storeLease, err)
				if err == nil && !held && slotted {
					// The claim stops at a lease held by another owner:
					// the slot this session still runs in is renewed on
					// its own, so the fleet's cap keeps counting it.
					_, serr := b.state.Acquire(rctx, sessionSlots, r.id, claim.Limit, b.leaseTTL)
					b.storeResult(storeSlots, serr)
				}
				if err == nil && !held && !lost {
					// Another replica took the thread while this one could
					// not renew (a store outage longer than the lease).
					// The session goes on: its asker is waiting for it.
					b.log.Warn("thread lease lost to another replica; two sessions may answer in it", zap.String("thread", key))
				}
				if err == nil {
					lost = !held
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-renewed
		b.storeResult(storeLease, state.ReleaseBoth(context.WithoutCancel(ctx), b.state, claim))
		b.mu.Lock()
		close(b.threads[key])
		delete(b.threads, key)
		b.mu.Unlock()
	}, slotted
}

// history is the thread so far as user and assistant turns, oldest first,
// without the question itself, bounded by slack.history. Progress messages
// are not part of it: the one at own is this session's, and any other was
// left by a session that died, and is returned as abandoned.
func (b *Bot) history(ctx context.Context, req request, own string) (turns []llm.Message, abandoned []slackapi.Message) {
	if req.threadTS == "" || req.threadTS == req.ts && !req.followup {
		return nil, nil
	}
	msgs, err := b.replies(ctx, req.channel, req.threadTS)
	if err != nil {
		b.log.Warn("thread history unavailable; answering without it", zap.Error(slackError(err)))
		return nil, nil
	}
	var out []llm.Message
	chars := 0
	names := b.newNameBook()
	for i := len(msgs) - 1; i >= 0 && len(out) < b.cfg.History.MaxMessages; i-- {
		m := msgs[i]
		if m.BotID != "" && isProgress(m) {
			if m.Timestamp != own {
				abandoned = append(abandoned, m)
			}
			continue
		}
		if m.Timestamp == req.ts || strings.TrimSpace(m.Text) == "" {
			continue
		}
		var msg llm.Message
		if m.BotID != "" || m.User == b.botUserID {
			if m.BotID != "" && m.BotID != b.botID && m.User != b.botUserID {
				msg = llm.Message{Role: llm.RoleUser, Content: "(another bot) " + m.Text}
			} else {
				msg = llm.Message{Role: llm.RoleAssistant, Content: m.Text}
			}
		} else {
			msg = llm.Message{Role: llm.RoleUser, Content: names.name(ctx, m.User) + ": " + names.mentions(ctx, b.stripMention(m.Text))}
		}
		if chars+len(msg.Content) > b.cfg.History.MaxChars {
			break
		}
		chars += len(msg.Content)
		out = append(out, msg)
	}
	slices.Reverse(out)
	return out, abandoned
}

// maxThreadRead bounds how many messages of a thread are read to find its
// newest ones (conversations.replies pages from the oldest).
const maxThreadRead = 2000

// replies reads a thread oldest first, page by page, keeping the newest
// history.max_messages + 1 (the question may be among them).
func (b *Bot) replies(ctx context.Context, channel, ts string) ([]slackapi.Message, error) {
	keep := b.cfg.History.MaxMessages + 1
	var out []slackapi.Message
	cursor := ""
	for read := 0; read < maxThreadRead; {
		var page []slackapi.Message
		var more bool
		var next string
		err := withRetry(ctx, func() error {
			var err error
			page, more, next, err = b.api.GetConversationRepliesContext(ctx, &slackapi.GetConversationRepliesParameters{
				ChannelID: channel, Timestamp: ts, Cursor: cursor, Limit: 200})
			return err
		})
		if err != nil {
			return nil, err
		}
		read += len(page)
		for _, m := range page {
			noteAuthor(ctx, m.User)
		}
		out = append(out, page...)
		if len(out) > keep {
			out = out[len(out)-keep:]
		}
		if !more || next == "" {
			break
		}
		cursor = next
	}
	return out, nil
}

// openSlashThread posts the message a slash command's answer hangs under —
// the question, in the channel, or in the asker's DM when the bot is not a
// member there — and makes it the request's thread.
func (r *run) openSlashThread(ctx context.Context) error {
	b := r.b
	q := blockkit.Message{Text: "Question from <@" + r.req.user + ">", Blocks: []slackapi.Block{
		slackapi.NewContextBlock("", slackapi.NewTextBlockObject(slackapi.MarkdownType,
			fmt.Sprintf("<@%s> asked with %s:", r.req.user, b.cfg.SlashCommand), false, false)),
		slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.PlainTextType, blockkitClamp(r.req.text), false, false), nil, nil),
	}}
	ts, err := b.send(ctx, r.req.channel, "", "", q)
	if err != nil && isSlackErr(err, "not_in_channel", "channel_not_found") {
		ch, _, _, oerr := b.api.OpenConversationContext(ctx, &slackapi.OpenConversationParameters{Users: []string{r.req.user}})
		if oerr != nil {
			return oerr
		}
		r.req.channel = ch.ID
		ts, err = b.send(ctx, r.req.channel, "", "", q)
	}
	if err != nil {
		return err
	}
	r.req.threadTS = ts
	return nil
}

// blockkitClamp keeps a question within a section's plain text limit.
func blockkitClamp(s string) string {
	const max = 2900
	if blockkit.Len(s) <= max {
		return s
	}
	r := []rune(s)
	for blockkit.Len(string(r)) > max-1 {
		r = r[:len(r)*9/10]
	}
	return string(r) + "…"
}

// isSlackErr reports whether err is a Slack error with one of the codes.
func isSlackErr(err error, codes ...string) bool {
	var se slackapi.SlackErrorResponse
	return errors.As(err, &se) && slices.Contains(codes, se.Err)
}

// maxRecordedReport bounds the answer kept in a session record.
const maxRecordedReport = 16 << 10
