package slack

import (
	"context"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/slack/ratelimit"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/form"
)

// A tool's question (an MCP server's elicitation) becomes a message in
// the thread: the server's request and Answer / Decline / Cancel. Answer
// opens a modal built from the requested schema; its submission is checked
// against the schema (problems shown in the modal, per field) and the
// typed content goes back as accept. Only the asker may answer; anyone
// else is told so. No answer within the answer timeout cancels. The
// message is updated with the outcome. The server's words are untrusted:
// they are shown only as plain text, where Slack neither pings, links nor
// formats. Clicks and submissions are answered on the replica running the
// session; one delivered to another replica finds no question there and
// answers nothing.

// The action ids of the question's buttons and the modal's callback id.
const (
	elicitOpenAction    = "slackbot_elicit_open"
	elicitDeclineAction = "slackbot_elicit_decline"
	elicitCancelAction  = "slackbot_elicit_cancel"
	elicitCallback      = "slackbot_elicit"
	// elicitValue is the action id of every input of the modal; the
	// block id names the field.
	elicitValue = "value"
)

// elicitRefusal is what someone other than the asker is told.
const elicitRefusal = "Only the person who asked can answer this."

// elicitRetry is what the asker is told when the form did not open (Slack
// gives three seconds to open it after the click).
const elicitRetry = "The form could not be opened. Press Answer again."

// question is one elicitation waiting in a thread.
type question struct {
	id      string
	session string
	asker   string
	channel string
	thread  string
	server  string
	message string
	form    *form.Form
	answer  chan tools.ElicitAnswer // one slot; the first answer wins

	mu     sync.Mutex
	ts     string // the question's message
	viewID string // the modal open for it ("" until views.open answers)
	// opened is the private_metadata of the modal last opened for it: the
	// question's id and a nonce of that opening.
	opened string
	// opening is closed when the views.open of the last opening answered.
	opening chan struct{}
}

// give hands the answer to the waiting call, once; later ones are dropped.
func (q *question) give(a tools.ElicitAnswer) bool {
	select {
	case q.answer <- a:
		return true
	default:
		return false
	}
}

// questions are the questions waiting on this replica.
type questions struct {
	mu   sync.Mutex
	open map[string]*question
}

// addAlone adds q unless a question of its session is waiting: a server
// asking many questions at once gets one shown, not a thread of them.
func (qs *questions) addAlone(q *question) bool {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	for _, o := range qs.open {
		if o.session == q.session {
			return false
		}
	}
	if qs.open == nil {
		qs.open = map[string]*question{}
	}
	qs.open[q.id] = q
	return true
}

func (qs *questions) get(id string) *question {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	return qs.open[id]
}

func (qs *questions) remove(id string) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	delete(qs.open, id)
}

// answerTimeout is how long a question waits: Options.AnswerTimeout when
// set, else approval_timeout, the wait for a person's decision.
func (b *Bot) answerTimeout() time.Duration {
	if b.answerWait > 0 {
		return b.answerWait
	}
	if b.conf != nil && b.conf.ApprovalTimeout > 0 {
		return b.conf.ApprovalTimeout.D()
	}
	return config.DefaultApprovalTimeout
}

// elicitor is a session's way to ask its asker.
type elicitor struct {
	r   *run
	ctx context.Context // the run's: its voice
}

// Answerers names who may answer: the asker.
func (e elicitor) Answerers() []string { return []string{e.r.req.user} }

// Elicit posts the question, waits for the answer, and updates the
// message with the outcome.
func (e elicitor) Elicit(ctx context.Context, req tools.ElicitRequest) (tools.ElicitAnswer, error) {
	b, r := e.r.b, e.r
	f, err := form.Parse(req.Schema)
	if err != nil {
		return tools.ElicitAnswer{Action: tools.ElicitDecline, Reason: "the form cannot be shown: " + err.Error()}, nil
	}
	q := &question{id: randomHex(12), session: r.id, asker: r.req.user, channel: r.req.channel, thread: r.req.threadTS,
		server: req.Server, message: req.Message, form: f, answer: make(chan tools.ElicitAnswer, 1)}
	if !b.questions.addAlone(q) {
		b.log.Info("a tool's question declined: another waits", zap.String("session", r.id), zap.String("mcp_server", req.Server))
		return tools.ElicitAnswer{Action: tools.ElicitDecline, Reason: "another question of this request is waiting for its answer"}, nil
	}
	defer b.questions.remove(q.id)
	post := func() context.Context {
		return ratelimit.WithPriority(context.WithoutCancel(e.ctx), ratelimit.Answer)
	}
	ts, err := b.send(post(), q.channel, q.thread, "", questionMessage(q, ""))
	if err != nil {
		b.log.Warn("a tool's question could not be posted", zap.String("session", r.id), zap.Error(slackError(err)))
		return tools.ElicitAnswer{Action: tools.ElicitCancel, Reason: "the question could not be posted"}, nil
	}
	q.mu.Lock()
	q.ts = ts
	q.mu.Unlock()
	b.log.Info("a tool asks the asker", zap.String("session", r.id), zap.String("mcp_server", req.Server), zap.Int("fields", len(f.Fields)))

	timer := time.NewTimer(b.answerTimeout())
	defer timer.Stop()
	// A Decline or Cancel clicked on another replica is found in the store.
	poll := time.NewTicker(stopPoll)
	defer poll.Stop()
	var ans tools.ElicitAnswer
	var outcome string
	for outcome == "" {
		select {
		case ans = <-q.answer:
		case <-poll.C:
			var ok bool
			if ans, ok = b.recorded(ctx, q); !ok {
				continue
			}
		case <-timer.C:
			ans = tools.ElicitAnswer{Action: tools.ElicitCancel, Reason: agent.ReasonTimedOut}
			outcome = "No answer in time: cancelled"
			continue
		case <-ctx.Done():
			ans = tools.ElicitAnswer{Action: tools.ElicitCancel, Reason: "the call ended"}
			outcome = "No longer needed"
			continue
		}
		outcome = map[tools.ElicitAction]string{tools.ElicitAccept: "Answered", tools.ElicitDecline: "Declined",
			tools.ElicitCancel: "Cancelled"}[ans.Action]
	}
	b.log.Info("a tool's question answered", zap.String("session", r.id), zap.String("action", string(ans.Action)), zap.String("reason", ans.Reason))
	if _, err := b.send(post(), q.channel, q.thread, ts, questionMessage(q, outcome)); err != nil {
		b.log.Warn("a tool's question could not be updated", zap.String("session", r.id), zap.Error(slackError(err)))
	}
	return ans, nil
}

// maxShown bounds the server's message in the question and the modal.
const maxShown = 2900

// clip shortens s to at most n characters as Slack counts them.
func clip(s string, n int) string {
	if blockkit.Len(s) <= n {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && blockkit.Len(string(r))+1 > n {
		r = r[:len(r)*9/10]
	}
	return string(r) + "…"
}

// plain is a plain_text object: shown as typed, never a ping or a link.
func plain(s string) *slackapi.TextBlockObject {
	return slackapi.NewTextBlockObject(slackapi.PlainTextType, s, false, false)
}

// answerKey marks that the asker declined or cancelled question id on
// another replica.
func answerKey(id, action string) string { return "elicit:" + id + ":" + action }

// recordAnswer records, off the envelope loop, a Decline or Cancel for the
// replica where the question waits.
func (b *Bot) recordAnswer(id, action string) {
	b.sessions.Add(1)
	go func() {
		defer b.sessions.Done()
		defer b.survive("a question's answer for another replica")
		ctx, cancel := context.WithTimeout(b.work, b.leaseTTL)
		defer cancel()
		if err := b.marks.mark(ctx, answerKey(id, action), b.leaseTTL); err != nil {
			b.log.Warn("an answer to a question on another replica could not be recorded", zap.String("question", id))
		}
	}()
}

// recorded is the Decline or Cancel another replica recorded for q.
func (b *Bot) recorded(ctx context.Context, q *question) (tools.ElicitAnswer, bool) {
	for action, ans := range map[string]tools.ElicitAction{elicitDeclineAction: tools.ElicitDecline, elicitCancelAction: tools.ElicitCancel} {
		if ok, err := b.marks.marked(ctx, answerKey(q.id, action)); err == nil && ok {
			return tools.ElicitAnswer{Action: ans}, true
		}
	}
	return tools.ElicitAnswer{}, false
}

// questionMessage is the question's message: waiting (outcome "") with
// its buttons, or settled with the outcome in place of the buttons.
func questionMessage(q *question, outcome string) blockkit.Message {
	head := slackapi.NewSectionBlock(plain(clip("The tool server "+q.server+" asks:", 300)), nil, nil)
	body := slackapi.NewSectionBlock(plain(clip(orNone(q.message), maxShown)), nil, nil)
	text := "A tool is asking a question"
	m := blockkit.Message{Text: text, Blocks: []slackapi.Block{head, body}}
	if outcome != "" {
		m.Blocks = append(m.Blocks, slackapi.NewContextBlock("", plain(outcome)))
		return m
	}
	actions := slackapi.NewActionBlock("slackbot_elicit",
		slackapi.NewButtonBlockElement(elicitOpenAction, stopValue(q.id, q.asker), plain("Answer")).WithStyle(slackapi.StylePrimary),
		slackapi.NewButtonBlockElement(elicitDeclineAction, stopValue(q.id, q.asker), plain("Decline")),
		slackapi.NewButtonBlockElement(elicitCancelAction, stopValue(q.id, q.asker), plain("Cancel")))
	m.Blocks = append(m.Blocks, actions)
	m.Controls = []slackapi.Block{actions}
	return m
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(no message)"
	}
	return s
}

// onElicitAction handles a click on a question's button. The button's
// value names the question and its asker, so a replica where the question
// does not wait still refuses strangers, and records a Decline or Cancel
// in the state store for the replica where it waits; a form can only be
// opened there.
func (b *Bot) onElicitAction(cb slackapi.InteractionCallback, a *slackapi.BlockAction) {
	id, owner := parseStopValue(a.Value)
	q := b.questions.get(id)
	user := cb.User.ID
	refuse := func(text string) {
		b.sessions.Add(1)
		go func() {
			defer b.sessions.Done()
			defer b.survive("a question's refusal")
			_ = b.ephemeral(ratelimit.WithPriority(b.work, ratelimit.Note), cb.Channel.ID, user, "", text)
		}()
	}
	switch {
	case q == nil && owner != "" && user != owner:
		refuse(elicitRefusal)
		return
	case q == nil && a.ActionID == elicitOpenAction:
		refuse(elicitRetry)
		return
	case q == nil:
		b.recordAnswer(id, a.ActionID)
		return
	case user != q.asker:
		b.log.Info("a click on a tool's question by someone other than the asker was refused", zap.String("by", user))
		refuse(elicitRefusal)
		return
	}
	switch a.ActionID {
	case elicitDeclineAction:
		q.give(tools.ElicitAnswer{Action: tools.ElicitDecline})
	case elicitCancelAction:
		q.give(tools.ElicitAnswer{Action: tools.ElicitCancel})
	case elicitOpenAction:
		// The trigger lasts three seconds: open the modal at once, off the
		// envelope loop.
		b.sessions.Add(1)
		go func() {
			defer b.sessions.Done()
			defer b.survive("opening a question's form")
			ctx, cancel := context.WithTimeout(ratelimit.WithPriority(b.work, ratelimit.Answer), 3*time.Second)
			defer cancel()
			meta := q.id + ":" + randomHex(8)
			opening := make(chan struct{})
			defer close(opening)
			q.mu.Lock()
			q.opened, q.viewID, q.opening = meta, "", opening
			q.mu.Unlock()
			v, err := b.api.OpenViewContext(ctx, cb.TriggerID, questionModal(q, meta))
			if err != nil {
				b.log.Warn("a question's form could not be opened", zap.Error(slackError(err)))
				_ = b.ephemeral(ratelimit.WithPriority(b.work, ratelimit.Note), cb.Channel.ID, user, "", elicitRetry)
				return
			}
			q.mu.Lock()
			if q.opened == meta {
				q.viewID = v.ID
			}
			q.mu.Unlock()
		}()
	}
}
