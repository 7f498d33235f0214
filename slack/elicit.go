package slack

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/blockkit"
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

// defaultAnswerTimeout is how long a question waits for its answer when
// Options.AnswerTimeout is not set.
const defaultAnswerTimeout = 10 * time.Minute

// openWait bounds how long a submission waits for the answer of the
// views.open that showed its modal.
const openWait = time.Second

// elicitRefusal is what someone other than the asker is told.
const elicitRefusal = "Only the person who asked can answer this."

// elicitRetry is what the asker is told when the form did not open (Slack
// gives three seconds to open it after the click).
const elicitRetry = "The form could not be opened. Press Answer again."

// question is one elicitation waiting in a thread.
type question struct {
	id      string
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

func (qs *questions) add(q *question) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if qs.open == nil {
		qs.open = map[string]*question{}
	}
	qs.open[q.id] = q
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

// answerTimeout is how long a question waits.
func (b *Bot) answerTimeout() time.Duration {
	if b.answerWait > 0 {
		return b.answerWait
	}
	return defaultAnswerTimeout
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
	q := &question{id: randomHex(12), asker: r.req.user, channel: r.req.channel, thread: r.req.threadTS,
		server: req.Server, message: req.Message, form: f, answer: make(chan tools.ElicitAnswer, 1)}
	b.questions.add(q)
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

// questionModal is the form of q as a modal.
func questionModal(q *question, meta string) slackapi.ModalViewRequest {
	blocks := []slackapi.Block{
		slackapi.NewSectionBlock(plain(clip(q.server+" asks: "+orNone(q.message), maxShown)), nil, nil),
	}
	for i, f := range q.form.Fields {
		var hint *slackapi.TextBlockObject
		if f.Description != "" {
			hint = plain(clip(f.Description, 1900))
		}
		in := slackapi.NewInputBlock(fieldBlockID(i, f.Name), plain(clip(f.Title, 1900)), hint, fieldElement(f))
		in.Optional = !f.Required
		blocks = append(blocks, in)
	}
	return slackapi.ModalViewRequest{
		Type: slackapi.VTModal, Title: plain("Answer the question"), Submit: plain("Submit"), Close: plain("Close"),
		CallbackID: elicitCallback, PrivateMetadata: meta, NotifyOnClose: true, Blocks: slackapi.Blocks{BlockSet: blocks},
	}
}

// fieldBlockID is the block id of the i-th field: its name, or its
// position when the name is too long for a block id.
func fieldBlockID(i int, name string) string {
	if len(name) <= 200 {
		return "field:" + name
	}
	return "field#" + strconv.Itoa(i)
}

// fieldElement is the input element of a field, showing its default.
func fieldElement(f form.Field) slackapi.BlockElement {
	def := ""
	if len(f.Default) > 0 {
		def = f.Default[0]
	}
	// An option's value in Slack is its position: the schema's values may
	// be longer than Slack allows.
	options := func() []*slackapi.OptionBlockObject {
		var out []*slackapi.OptionBlockObject
		for i, o := range f.Options {
			out = append(out, slackapi.NewOptionBlockObject(strconv.Itoa(i), plain(clip(o.Title, 75)), nil))
		}
		return out
	}
	pick := func(opts []*slackapi.OptionBlockObject, values []string) []*slackapi.OptionBlockObject {
		var out []*slackapi.OptionBlockObject
		for _, v := range values {
			for i, o := range f.Options {
				if o.Value == v && i < len(opts) {
					out = append(out, opts[i])
				}
			}
		}
		return out
	}
	switch f.Kind {
	case form.Number, form.Integer:
		e := slackapi.NewNumberInputBlockElement(nil, elicitValue, f.Kind == form.Number)
		e.InitialValue = def
		if f.Minimum != nil {
			e.MinValue = strconv.FormatFloat(*f.Minimum, 'f', -1, 64)
		}
		if f.Maximum != nil {
			e.MaxValue = strconv.FormatFloat(*f.Maximum, 'f', -1, 64)
		}
		return e
	case form.Boolean:
		opts := []*slackapi.OptionBlockObject{
			slackapi.NewOptionBlockObject("true", plain("Yes"), nil),
			slackapi.NewOptionBlockObject("false", plain("No"), nil),
		}
		e := slackapi.NewRadioButtonsBlockElement(elicitValue, opts...)
		for _, o := range opts {
			if len(f.Default) == 1 && o.Value == f.Default[0] {
				e.InitialOption = o
			}
		}
		return e
	case form.Select:
		opts := options()
		e := slackapi.NewOptionsSelectBlockElement(slackapi.OptTypeStatic, plain("Choose"), elicitValue, opts...)
		if sel := pick(opts, f.Default); len(sel) == 1 {
			e.InitialOption = sel[0]
		}
		return e
	case form.MultiSelect:
		opts := options()
		e := slackapi.NewOptionsMultiSelectBlockElement(slackapi.MultiOptTypeStatic, plain("Choose"), elicitValue, opts...)
		e.InitialOptions = pick(opts, f.Default)
		if f.MaxItems != nil && *f.MaxItems > 0 {
			e.MaxSelectedItems = f.MaxItems
		}
		return e
	}
	e := slackapi.NewPlainTextInputBlockElement(nil, elicitValue)
	e.InitialValue = def
	if f.MinLength != nil && *f.MinLength > 0 && *f.MinLength <= 3000 {
		e.MinLength = *f.MinLength
	}
	if f.MaxLength != nil && *f.MaxLength > 0 && *f.MaxLength <= 3000 {
		e.MaxLength = *f.MaxLength
	}
	return e
}

// viewAck is the acknowledgement of a view_submission of a question's
// form: nil closes the modal; errors keep it open with the problems shown
// by field. A submission this replica did not ask for, of a view it did
// not open or by someone other than the asker, answers nothing.
func (b *Bot) viewAck(cb slackapi.InteractionCallback) any {
	if cb.View.CallbackID != elicitCallback {
		return nil
	}
	id, _, _ := strings.Cut(cb.View.PrivateMetadata, ":")
	q := b.questions.get(id)
	if q == nil {
		// Over, or waiting on another replica (Slack deals submissions to
		// any): the form stays open, saying so, rather than closing as if
		// it had been answered.
		b.log.Info("a form was submitted for a question not waiting here; nothing answered")
		return notHere(cb.View.State)
	}
	q.mu.Lock()
	opening := q.opening
	q.mu.Unlock()
	if opening != nil {
		// The view's id is known once views.open answered, which a
		// submission can overtake by a moment.
		select {
		case <-opening:
		case <-time.After(openWait):
		}
	}
	q.mu.Lock()
	opened, viewID := q.opened, q.viewID
	q.mu.Unlock()
	if cb.User.ID != q.asker || opened == "" || cb.View.PrivateMetadata != opened || viewID == "" || cb.View.ID != viewID {
		b.log.Warn("a form submission that does not match its question was ignored", zap.String("by", cb.User.ID))
		return nil
	}
	in := map[string][]string{}
	for i, f := range q.form.Fields {
		st, ok := cb.View.State.Values[fieldBlockID(i, f.Name)][elicitValue]
		if !ok {
			continue
		}
		in[f.Name] = stateValues(f, st)
	}
	content, problems := q.form.Answer(in)
	if problems != nil && len(q.form.Fields) > 0 {
		errs := map[string]string{}
		for i, f := range q.form.Fields {
			if p, ok := problems[f.Name]; ok {
				errs[fieldBlockID(i, f.Name)] = p
			}
		}
		first := fieldBlockID(0, q.form.Fields[0].Name)
		if p, ok := problems[""]; ok {
			errs[first] = p
		}
		if len(errs) == 0 {
			errs[first] = problems.Error()
		}
		return slackapi.NewErrorsViewSubmissionResponse(errs)
	}
	if !q.give(tools.ElicitAnswer{Action: tools.ElicitAccept, Content: content}) {
		b.log.Info("a form was submitted after its question was answered")
	}
	return nil
}

// elicitNotHere is shown in a form submitted where its question does not wait.
const elicitNotHere = "Not submitted: press Submit again. If this repeats, the question is over and the form can be closed."

// notHere is the errors response that keeps a form open with
// elicitNotHere on its first input.
func notHere(st *slackapi.ViewState) any {
	if st == nil || len(st.Values) == 0 {
		return nil
	}
	ids := make([]string, 0, len(st.Values))
	for id := range st.Values {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return slackapi.NewErrorsViewSubmissionResponse(map[string]string{ids[0]: elicitNotHere})
}

// stateValues reads what an input of field f holds as the form's strings.
func stateValues(f form.Field, a slackapi.BlockAction) []string {
	option := func(v string) string {
		if f.Kind != form.Select && f.Kind != form.MultiSelect {
			return v
		}
		if i, err := strconv.Atoi(v); err == nil && i >= 0 && i < len(f.Options) {
			return f.Options[i].Value
		}
		return "\x00" + v // no option: refused as such
	}
	switch {
	case a.SelectedOption.Value != "":
		return []string{option(a.SelectedOption.Value)}
	case len(a.SelectedOptions) > 0:
		out := make([]string, 0, len(a.SelectedOptions))
		for _, o := range a.SelectedOptions {
			out = append(out, option(o.Value))
		}
		return out
	case a.Value != "":
		return []string{a.Value}
	}
	return nil
}

// onViewClosed forgets the modal of a question closed without submitting;
// the question's buttons still wait.
func (b *Bot) onViewClosed(cb slackapi.InteractionCallback) {
	if cb.View.CallbackID != elicitCallback {
		return
	}
	id, _, _ := strings.Cut(cb.View.PrivateMetadata, ":")
	if q := b.questions.get(id); q != nil && cb.User.ID == q.asker {
		q.mu.Lock()
		if q.opened == cb.View.PrivateMetadata {
			q.opened, q.viewID = "", ""
		}
		q.mu.Unlock()
	}
}
