package slack

import (
	"context"
	"errors"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/redact"
	"github.com/slackbot/slackbot/state"
)

// Feedback on answers. An answer ends with Slack's feedback buttons (a
// context_actions block); each button's value names the verdict and the
// session, "positive:<session id>" or "negative:<session id>". A click is
// recorded on the session's record, where each person's last click is their
// verdict, and thanked with an ephemeral message. Failures, stopped and
// interrupted sessions, refusals and quota messages get no buttons: there
// is no answer to judge.

// feedbackAction is the action id of the feedback buttons.
const feedbackAction = "slackbot_feedback"

// The two verdicts, named as Slack names its buttons.
const (
	feedbackPositive = "positive"
	feedbackNegative = "negative"
)

// feedbackThanks is what the person who clicked is told, and only them.
const feedbackThanks = "Thanks for the feedback."

// feedbackFallback is the notification text of a message that holds the
// buttons alone, when the answer's last message has no room for them.
const feedbackFallback = "Was this answer helpful?"

// feedbackBlock is the row of feedback buttons for session id.
func feedbackBlock(id string) slackapi.Block {
	button := func(emoji, verdict, label string) *slackapi.FeedbackButton {
		return slackapi.NewFeedbackButton(slackapi.NewTextBlockObject(slackapi.PlainTextType, emoji, true, false),
			verdict+":"+id).WithAccessibilityLabel(label)
	}
	return slackapi.NewContextActionsBlock("", slackapi.NewFeedbackButtonsBlockElement(feedbackAction,
		button("👍", feedbackPositive, "This answer helped"),
		button("👎", feedbackNegative, "This answer did not help")))
}

// parseFeedbackValue reads a button's value back: the verdict and the
// session id.
func parseFeedbackValue(v string) (verdict, session string, ok bool) {
	verdict, session, ok = strings.Cut(v, ":")
	if !ok || session == "" || verdict != feedbackPositive && verdict != feedbackNegative {
		return "", "", false
	}
	return verdict, session, true
}

// withFeedback ends the answer msgs of session id with the feedback
// buttons, when slack.feedback is on and there is an answer to judge: the
// model's own report (not one the loop made up), not a failure, neither
// stopped (stopper is who stopped it, "" for nobody) nor interrupted.
func (r *run) withFeedback(msgs []blockkit.Message, rep *agent.Report, stopper string) []blockkit.Message {
	if !r.b.cfg.FeedbackOn() || rep.Synthetic() || rep.Status == agent.StatusFailure ||
		r.interrupted.Load() || stopper != "" {
		return msgs
	}
	return blockkit.AppendControls(msgs, feedbackFallback, feedbackBlock(r.id))
}

// onFeedback handles a click on feedback buttons, on a goroutine of its own
// so that the next envelope is not held up by the store or Slack.
func (b *Bot) onFeedback(cb slackapi.InteractionCallback, a *slackapi.BlockAction) {
	b.sessions.Add(1)
	go func() {
		defer b.sessions.Done()
		defer b.survive("a feedback click")
		b.recordFeedback(b.work, cb, a)
	}()
}

// recordFeedback records a click as its person's verdict on the session,
// counts it in the metrics, tells the hook and thanks the person. A click on a session the store
// does not know (expired, another workspace's bot) or on buttons this bot
// did not write is logged and otherwise ignored.
func (b *Bot) recordFeedback(ctx context.Context, cb slackapi.InteractionCallback, a *slackapi.BlockAction) {
	user := cb.User.ID
	verdict, id, ok := parseFeedbackValue(a.Value)
	if !ok || user == "" {
		b.log.Info("feedback click not understood; ignored", zap.String("value", a.Value), zap.String("user", user))
		return
	}
	log := b.log.With(zap.String("session", id), zap.String("value", verdict), zap.String("user", user))
	// A click is delivered once; should Slack deliver the same one again
	// (the same person, the same action_ts), it is recorded, thanked and
	// counted once.
	if a.ActionTs != "" && !b.once(ctx, "feedback:"+user+":"+a.ActionTs) {
		log.Info("duplicate feedback click ignored")
		return
	}
	rec, found, err := b.records.session(ctx, id)
	if err != nil {
		log.Warn("feedback not recorded", zap.String("error", redact.Cause(err)))
		return
	}
	// The buttons live in the session's channel; a value naming a session
	// elsewhere was not written by this bot for this answer.
	if !found || rec.Channel != cb.Channel.ID {
		log.Info("feedback on a session this bot does not know; ignored")
		return
	}
	err = b.records.setFeedback(ctx, id, state.Feedback{User: user, Value: verdict, At: time.Now()})
	if errors.Is(err, state.ErrNoSession) {
		log.Info("feedback on a session this bot does not know; ignored")
		return
	}
	if err != nil {
		log.Warn("feedback not recorded", zap.String("error", redact.Cause(err)))
		return
	}
	log.Info("feedback recorded")
	b.metrics.Feedback(verdict)
	if b.feedbackHook != nil {
		b.feedbackHook(verdict)
	}
	thread := cb.Container.ThreadTs
	if thread == "" {
		thread = cb.Message.ThreadTimestamp
	}
	if err := b.ephemeral(ctx, cb.Channel.ID, user, thread, feedbackThanks); err != nil {
		log.Debug("feedback thanks not posted", zap.Error(slackError(err)))
	}
}

// onlyButtons reports whether m holds nothing but a row of buttons with no
// words of the answer, which is better left out than posted as text.
func onlyButtons(m blockkit.Message) bool {
	if len(m.Blocks) != 1 {
		return false
	}
	_, ok := m.Blocks[0].(*slackapi.ContextActionsBlock)
	return ok
}
