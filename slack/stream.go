package slack

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/slack/ratelimit"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/telemetry"
)

// stream is a session shown as a message streamed in its thread:
// chat.startStream when the session is taken on, its timeline's changes
// appended at most every streamInterval (one chat.appendStream carries
// every change since the last), and chat.stopStream with the answer's
// first message, the rest of a long answer posted after it. A thread's
// agent session follows it: processing from the start, active once
// answered, closed at the end.
//
// A stream never costs an answer. In auto, a session that finds no
// chat.startStream token at once, or whose start Slack refused recently
// for the same reason, shows the progress message instead; so does one
// whose start Slack refuses. A stop Slack refuses (the stream ended
// already, Slack's Stop halted it, the blocks were refused) leaves the
// answer to be posted as new messages, once.
type stream struct {
	b   *Bot
	req request
	id  string
	tl  *timeline

	waitMu   sync.Mutex // orders the agent session's status with the waits' events
	mu       sync.Mutex
	begun    bool
	fallback *progress  // set when the session shows a progress message instead
	ts       string     // the streamed message, "" until started
	open     bool       // Slack still takes appends and the stop
	session  bool       // an agent session follows the stream
	rec      liveRecord // the open stream's record in the state store
	// recordedTasks are the running tasks its record names, as written.
	recordedTasks []state.OpenTask
	last          chan struct{}
	stopped       bool
	quit          chan struct{}
	finished      chan struct{}
	cancel        context.CancelFunc
}

func newStream(b *Bot, req request, id string) *stream {
	tl := newTimeline()
	tl.names = b.waitNames
	return &stream{b: b, req: req, id: id, tl: tl, quit: make(chan struct{}), finished: make(chan struct{})}
}

// streamInterval is the most often a stream is appended to: the
// progress interval, at most a second.
func (s *stream) streamInterval() time.Duration {
	return max(min(s.b.cfg.ProgressInterval.D(), time.Second), 10*time.Millisecond)
}

// shown is the progress message standing in for the stream, nil while
// the session streams.
func (s *stream) shown() *progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fallback
}

func (s *stream) begin(ctx context.Context) { s.beginWith(ctx, "") }

func (s *stream) beginWith(ctx context.Context, headline string) {
	s.mu.Lock()
	begun := s.begun
	s.begun = true
	s.mu.Unlock()
	if begun {
		if p := s.shown(); p != nil {
			p.beginWith(ctx, headline)
		}
		return
	}
	b := s.b
	if why := b.streamRefusals.recent(s.req); why != "" {
		s.fallBack(ctx, headline, telemetry.StreamFallbackRefused, why)
		return
	}
	sctx := ratelimit.WithPriority(ctx, ratelimit.First)
	if b.cfg.Display != config.DisplayStream {
		paid, ok := b.limiter.TakeNow(sctx, "chat.startStream", s.req.channel, ratelimit.First)
		if !ok {
			s.fallBack(ctx, headline, telemetry.StreamFallbackBudget, "no chat.startStream budget at once")
			return
		}
		sctx = paid
	}
	if headline == queuedHeadline {
		s.tl.wait("Waiting for a turn")
	}
	opts := []slackapi.MsgOption{slackapi.MsgOptionTS(s.req.threadTS), slackapi.MsgOptionTaskDisplayMode(taskDisplayMode(b.cfg.TaskDisplay))}
	if !strings.HasPrefix(s.req.channel, "D") { // in a channel, Slack streams to one person
		opts = append(opts, slackapi.MsgOptionRecipientUserID(s.req.user), slackapi.MsgOptionRecipientTeamID(cmp.Or(s.req.team, b.teamID)))
	}
	if chunks := s.pending(); len(chunks) > 0 {
		opts = append(opts, slackapi.MsgOptionChunks(chunks...))
	}
	_, ts, err := b.api.StartStreamContext(sctx, s.req.channel, opts...)
	if err != nil {
		why := errorCode(err)
		if refusedStream(why) {
			b.streamRefusals.remember(why, s.req)
		}
		s.fallBack(ctx, headline, telemetry.StreamFallbackRefused, why)
		return
	}
	s.mu.Lock()
	s.ts, s.open = ts, true
	s.mu.Unlock()
	running := s.tl.running(maxRecordedTasks) // those the start showed
	s.mu.Lock()
	s.recordedTasks = running
	s.mu.Unlock()
	s.rec.put(ctx, s.b, streamRecordKey(s.req.channel, s.req.threadTS, s.id), s.req.channel, ts, running...)
	s.sessionStatus("processing", escape(clipLine(s.req.text, 60)))
}

// fallBack shows the session as a progress message, saying why once per
// reason.
func (s *stream) fallBack(ctx context.Context, headline, outcome, why string) {
	b := s.b
	b.metrics.Stream(outcome)
	if b.streamRefusals.firstTime(why) {
		b.log.Info("a session shows a progress message instead of a stream", zap.String("why", why), zap.String("channel", s.req.channel))
	}
	p := newProgress(b, s.req, s.id)
	s.mu.Lock()
	s.fallback = p
	s.mu.Unlock()
	p.beginWith(ctx, headline)
}

func (s *stream) queued(ctx context.Context) {
	if p := s.shown(); p != nil {
		p.queued(ctx)
		return
	}
	s.tl.wait("Waiting for a turn")
	s.flush(ratelimit.WithPriority(ctx, ratelimit.First))
}

// start runs the updater until stop: every streamInterval, the
// timeline's changes go in one append. An append waiting for its budget
// is abandoned by stop; one already sent is waited for.
func (s *stream) start() {
	if p := s.shown(); p != nil {
		p.start()
		return
	}
	s.tl.endWait()
	ctx, cancel := context.WithCancel(ratelimit.WithPriority(s.b.work, ratelimit.Refresh))
	s.cancel = cancel
	go func() {
		defer close(s.finished)
		defer s.b.survive("a stream's appends")
		tick := time.NewTicker(s.streamInterval())
		defer tick.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-tick.C:
			}
			s.flush(ctx)
		}
	}()
}

func (s *stream) observe(e agent.Event) {
	if p := s.shown(); p != nil {
		p.observe(e)
		return
	}
	if e.Kind != agent.EventWaiting && e.Kind != agent.EventResumed {
		s.tl.observe(e)
		return
	}
	// The agent session is suspended while any wait on a person is open:
	// from the first to begin to the last to end.
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	before := s.tl.waiting()
	s.tl.observe(e)
	switch after := s.tl.waiting(); {
	case before == 0 && after > 0:
		s.sessionStatus("suspended", "")
	case before > 0 && after == 0:
		s.sessionStatus("processing", "")
	}
}

// pending is the timeline's changes as chunks.
func (s *stream) pending() []slackapi.StreamChunk {
	tasks, plan, planNew := s.tl.changes()
	return chunksOf(tasks, plan, planNew)
}

func chunksOf(tasks []task, plan string, planNew bool) []slackapi.StreamChunk {
	var out []slackapi.StreamChunk
	if planNew && plan != "" {
		out = append(out, slackapi.NewPlanUpdateChunk(escape(plan)))
	}
	for _, t := range tasks {
		out = append(out, t.chunk())
	}
	return out
}

// flush appends what changed since the last append; a failed append is
// tried again with the next. A stream Slack ended takes no more.
func (s *stream) flush(ctx context.Context) {
	s.mu.Lock()
	ts, open := s.ts, s.open
	s.mu.Unlock()
	if ts == "" || !open {
		return
	}
	tasks, plan, planNew := s.tl.changes()
	chunks := chunksOf(tasks, plan, planNew)
	if len(chunks) == 0 {
		return
	}
	_, _, err := s.b.api.AppendStreamContext(ctx, s.req.channel, ts, slackapi.MsgOptionChunks(chunks...))
	switch {
	case err == nil:
		if planNew {
			s.rename(plan)
		}
		s.recordTasks(ctx, ts)
	case errorCode(err) == "message_not_in_streaming_state":
		s.mu.Lock()
		s.open = false
		s.mu.Unlock()
	default:
		s.tl.again(tasks, planNew)
		s.b.log.Debug("stream append skipped", zap.Error(slackError(err)))
	}
}

// recordTasks keeps the stream's record naming the tasks it shows running,
// when they changed since it was last written: whoever ends the stream of
// a replica that died ends them too.
func (s *stream) recordTasks(ctx context.Context, ts string) {
	open := s.tl.running(maxRecordedTasks)
	s.mu.Lock()
	same := slices.Equal(open, s.recordedTasks)
	s.recordedTasks = open
	s.mu.Unlock()
	if !same {
		s.rec.update(ctx, s.b, streamRecordKey(s.req.channel, s.req.threadTS, s.id), s.req.channel, ts, open)
	}
}

// maxRecordedTasks bounds the running tasks a stream's record names.
const maxRecordedTasks = 20

func (s *stream) stop() {
	if p := s.shown(); p != nil {
		p.stop()
		return
	}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	s.mu.Unlock()
	close(s.quit)
	if s.cancel != nil {
		s.cancel()
		<-s.finished
	}
}

// replaceWith ends the stream with the answer's first message, every
// task settled, and posts the rest after it. A stop Slack refuses leaves
// the whole answer to be posted as new messages, and the stream, if Slack
// still holds it open, is ended with a note pointing at them.
func (s *stream) replaceWith(ctx context.Context, msgs []blockkit.Message) error {
	if p := s.shown(); p != nil {
		return p.replaceWith(ctx, msgs)
	}
	s.stop()
	b := s.b
	actx := ratelimit.WithPriority(ctx, ratelimit.Answer)
	if s.messageTS() == "" || len(msgs) == 0 {
		_, err := b.deliver(actx, s.req.channel, s.req.threadTS, "", msgs)
		return err
	}
	s.tl.settle(true, "")
	msgs = withNotesFolded(msgs)
	err := s.end(actx, msgs[0])
	if err == nil {
		b.metrics.Stream(telemetry.StreamAnswered)
		s.sessionStatus("active", "")
		_, err = b.deliver(actx, s.req.channel, s.req.threadTS, "", msgs[1:])
		return err
	}
	b.metrics.Stream(telemetry.StreamAnsweredBelow)
	why := errorCode(err)
	if b.streamRefusals.firstTime("stop: " + why) {
		b.log.Info("the stream did not take the answer; posting it as messages", zap.String("why", why))
	}
	_, err = b.deliver(actx, s.req.channel, s.req.threadTS, "", msgs)
	if err == nil {
		s.sessionStatus("active", "")
	}
	s.settle(ctx, "_Answered below._")
	return err
}

// withNotesFolded moves a note that follows a message ("Stopped by",
// "Interrupted") into it when the blocks fit, so that the stream's last
// words carry it rather than a message below.
func withNotesFolded(msgs []blockkit.Message) []blockkit.Message {
	for len(msgs) > 1 {
		last, prev := msgs[len(msgs)-1], msgs[len(msgs)-2]
		if len(last.Blocks) != 1 || len(last.Controls) > 0 || len(prev.Blocks)+1 > blockkit.MaxBlocks {
			break
		}
		if _, note := last.Blocks[0].(*slackapi.ContextBlock); !note {
			break
		}
		prev.Blocks = append(slices.Clip(prev.Blocks), last.Blocks[0])
		msgs = append(slices.Clip(msgs[:len(msgs)-2]), prev)
	}
	return msgs
}

// end stops the stream with m's blocks and the timeline's last changes.
func (s *stream) end(ctx context.Context, m blockkit.Message) error {
	s.mu.Lock()
	ts, open := s.ts, s.open
	s.mu.Unlock()
	if !open {
		return errStreamEnded
	}
	m = s.b.voiced(ctx, m)
	opts := []slackapi.MsgOption{}
	tasks, plan, planNew := s.tl.changes()
	if chunks := chunksOf(tasks, plan, planNew); len(chunks) > 0 {
		opts = append(opts, slackapi.MsgOptionChunks(chunks...))
	}
	if planNew {
		s.rename(plan)
	}
	if len(m.Blocks) > 0 {
		opts = append(opts, slackapi.MsgOptionBlocks(m.Blocks...))
	} else if m.Text != "" {
		opts = append(opts, slackapi.MsgOptionMarkdownText(m.Text))
	}
	err := withRetry(ctx, func() error {
		_, _, err := s.b.api.StopStreamContext(ctx, s.req.channel, ts, opts...)
		return err
	})
	if err == nil || errorCode(err) == "message_not_in_streaming_state" {
		s.mu.Lock()
		s.open = false
		s.mu.Unlock()
	} else {
		s.tl.again(tasks, planNew) // for the stop that settles the stream
	}
	return err
}

// errStreamEnded is a stop of a stream Slack had already ended.
var errStreamEnded = errors.New("slack: message_not_in_streaming_state")

// settle ends a stream still open after its content went elsewhere, with
// note; its tasks are settled with it.
func (s *stream) settle(ctx context.Context, note string) {
	s.mu.Lock()
	open := s.open
	s.mu.Unlock()
	if !open {
		return
	}
	sctx, cancel := context.WithTimeout(ratelimit.WithPriority(context.WithoutCancel(ctx), ratelimit.Settle), concludeEdit)
	defer cancel()
	if err := s.end(sctx, blockkit.Message{Text: note}); err != nil {
		s.b.log.Warn("a stream could not be ended", zap.Error(slackError(err)))
	}
}

// conclude ends the stream of a session with no answer with note m (a
// stop, a failure, the shutdown), every task still running settled as
// unfinished; if the stream does not take it, m is posted after it.
func (s *stream) conclude(ctx context.Context, m blockkit.Message) {
	if p := s.shown(); p != nil {
		p.conclude(ctx, m)
		return
	}
	s.stop()
	if s.messageTS() == "" {
		return
	}
	s.tl.settle(false, unfinished) // the note says why, in the stop's blocks
	base := ratelimit.WithPriority(context.WithoutCancel(ctx), ratelimit.Note)
	ectx, cancel := context.WithTimeout(base, concludeEdit)
	defer cancel()
	if err := s.end(ectx, m); err == nil {
		return
	}
	if _, err := s.b.send(ectx, s.req.channel, s.req.threadTS, "", m); err != nil {
		s.b.log.Warn("a stream's note could not be posted", zap.Error(slackError(err)))
	}
	s.settle(ctx, "")
}

func (s *stream) finish(ctx context.Context) {
	s.conclude(ctx, noteMessage("_Interrupted: the bot was restarting. Ask again in a minute._"))
}

func (s *stream) messageTS() string {
	if p := s.shown(); p != nil {
		return p.messageTS()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ts
}

// stopID names a streamed session by its message, which Slack's
// agent_session_stopped lists: a replica not running the session records
// the stop under it.
func (s *stream) stopID() string {
	if p := s.shown(); p != nil {
		return p.stopID()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ts == "" {
		return s.id
	}
	return streamStopID(s.req.channel, s.ts)
}

func streamStopID(channel, ts string) string { return "stream:" + channel + "/" + ts }

func (s *stream) forget(ctx context.Context) {
	if p := s.shown(); p != nil {
		p.forget(ctx)
		return
	}
	s.rec.drop(ctx, s.b, streamRecordKey(s.req.channel, s.req.threadTS, s.id))
	s.sessionStatus("closed", "")
}

// sessionStatus sets the thread's agent session's status.
func (s *stream) sessionStatus(status, title string) {
	s.mu.Lock()
	if status == "processing" {
		s.session = true
	}
	s.mu.Unlock()
	s.sessionCall("an agent session's status", func(ctx context.Context) error {
		p := slackapi.AgentSessionSetStatusParameters{ChannelID: s.req.channel, ThreadTS: s.req.threadTS, Status: status, Title: title}
		if status == "processing" {
			p.InitiatorUserID = s.req.user
		}
		_, err := s.b.api.SetAgentSessionStatusContext(ctx, p)
		return err
	})
}

// rename gives the thread's agent session the model's plan title.
func (s *stream) rename(title string) {
	s.sessionCall("an agent session's title", func(ctx context.Context) error {
		_, err := s.b.api.RenameAgentSessionContext(ctx, slackapi.AgentSessionRenameParameters{ChannelID: s.req.channel,
			ThreadTS: s.req.threadTS, Title: escape(clipLine(title, 60))})
		return err
	})
}

// sessionCall makes a call about the thread's agent session, once the
// session exists: off the session's path, after the calls before it, at
// the cosmetic priority; a failure only costs the decoration.
func (s *stream) sessionCall(what string, call func(context.Context) error) {
	b := s.b
	s.mu.Lock()
	on, prev := s.session, s.last
	done := make(chan struct{})
	s.last = done
	s.mu.Unlock()
	if !on {
		close(done)
		return
	}
	b.asides.Add(1)
	go func() {
		defer b.asides.Done()
		defer close(done)
		defer b.survive(what)
		if prev != nil {
			<-prev
		}
		ctx, cancel := context.WithTimeout(ratelimit.WithPriority(b.cosmeticCtx(b.work), ratelimit.Cosmetic), cosmeticPatience)
		defer cancel()
		if err := call(ctx); err != nil {
			b.log.Debug(what+" not set", zap.Error(slackError(err)))
		}
	}()
}

func taskDisplayMode(v string) slackapi.TaskDisplayMode {
	if v == config.TaskDisplayPlan {
		return slackapi.TaskDisplayModePlan
	}
	return slackapi.TaskDisplayModeTimeline
}

// errorCode is Slack's error code of err, or a word for what failed.
func errorCode(err error) string {
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	var rl *slackapi.RateLimitedError
	switch {
	case errors.As(err, &rl):
		return "ratelimited"
	case errors.Is(err, errStreamEnded):
		return "message_not_in_streaming_state"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "timeout"
	}
	return "error"
}
