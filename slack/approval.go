package slack

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/slack/ratelimit"
	"github.com/slackbot/slackbot/state"
)

// Approvals. A tool call that needs a person's yes pauses its session,
// and the thread gets one approval message for the calls of a turn that
// wait together: per call the tool (server, name, its description's first
// line), its arguments (the model's words: indented, secrets redacted,
// long values shortened, the whole shortened past maxShownArgs, escaped
// into a code block, through the voice) and Approve, Deny and "Approve
// for this thread" buttons. The tool's approvers (the asker by default)
// and slack.admins may decide; anyone else clicking gets an ephemeral
// refusal. Each decision replaces its call's buttons in place with who
// decided what, when. A click delivered to a replica not running the
// session is recorded in the state store, as Stop is, and the replica
// running it, looking every stopPoll, honours it when the one recorded is
// someone who may decide there. "Approve for this thread" is kept in the
// store for the thread, so later sessions of the thread run the tool
// without asking.

// The approval buttons' action ids.
const (
	approveAction       = "slackbot_approve"
	denyAction          = "slackbot_deny"
	approveThreadAction = "slackbot_approve_thread"
)

// approvalActions are the decisions a click can make, a denial first: of
// two recorded on another replica within one look, the denial stands.
var approvalActions = []string{denyAction, approveAction, approveThreadAction}

// approvalRefusal is what someone who may not decide is told.
const approvalRefusal = "Only the person who asked, or the approvers of this tool, can decide on this call."

// maxShownArgs bounds the arguments shown for one call, in characters;
// maxShownValue one string value among them.
const (
	maxShownArgs  = 2400
	maxShownValue = 300
)

// approvalWait is a call waiting on this replica for a click.
type approvalWait struct {
	index    int
	deciders []string // who may decide, besides the admins
	clicks   chan approvalClick
}

type approvalClick struct {
	index  int
	action string
	user   string
}

// may reports whether user may decide on the call.
func (w *approvalWait) may(user string, admins []string) bool {
	return slices.Contains(w.deciders, user) || slices.Contains(admins, user)
}

// Keys of the state store: a recorded decision and who made it, and a
// tool approved for a thread.
func decisionKey(wait, action string) string { return "approval:" + wait + ":" + action }
func deciderKey(wait, action, user string) string {
	return decisionKey(wait, action) + ":" + user
}
func approvedKey(channel, thread, tool string) string {
	return "approved:" + channel + "/" + thread + ":" + tool
}

// approvalValue is a button's value: the wait, the asker and the tool, so
// that a replica not running the session can tell who may decide.
func approvalValue(wait, asker, tool string) string { return wait + "|" + asker + "|" + tool }

func parseApprovalValue(v string) (wait, asker, tool string) {
	wait, rest, _ := strings.Cut(v, "|")
	asker, tool, _ = strings.Cut(rest, "|")
	return wait, asker, tool
}

// slackApprover asks in the run's thread.
type slackApprover struct{ r *run }

// approver is the run's agent.Approver.
func (r *run) approver() agent.Approver { return &slackApprover{r: r} }

// Standing reports whether tool was approved for the thread.
func (a *slackApprover) Standing(ctx context.Context, tool string) bool {
	ok, err := a.r.b.marks.marked(ctx, approvedKey(a.r.req.channel, a.r.req.threadTS, tool))
	return err == nil && ok
}

// Deciders resolves approvers to people, the asker first.
func (a *slackApprover) Deciders(approvers []string) []string {
	return a.r.b.deciders(a.r.b.work, a.r.req.user, approvers)
}

// deciders resolves approvers ("asker", user ids, user-group ids) to user
// ids, asker first. A group whose members cannot be read adds no one.
func (b *Bot) deciders(ctx context.Context, asker string, approvers []string) []string {
	if len(approvers) == 0 {
		approvers = []string{config.ApproverAsker}
	}
	var out []string
	add := func(u string) {
		if u != "" && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	if slices.Contains(approvers, config.ApproverAsker) {
		add(asker)
	}
	for _, a := range approvers {
		switch {
		case a == config.ApproverAsker:
		case strings.HasPrefix(a, "S"):
			gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			members, err := b.api.GetUserGroupMembersContext(gctx, a)
			cancel()
			if err != nil {
				b.log.Warn("the members of an approvers user group could not be read", zap.String("group", a), zap.Error(slackError(err)))
			}
			for _, m := range members {
				add(m)
			}
		default:
			add(a)
		}
	}
	return out
}

// Approve posts the approval message and waits for a decision on each
// call, or for ctx to end.
func (a *slackApprover) Approve(ctx context.Context, req agent.ApprovalRequest) []agent.Decision {
	r, b := a.r, a.r.b
	n := len(req.Calls)
	out := make([]agent.Decision, n)
	clicks := make(chan approvalClick, 4*n)
	waits := make([]*approvalWait, n)
	for i, c := range req.Calls {
		waits[i] = &approvalWait{index: i, deciders: a.Deciders(c.Approval.Approvers), clicks: clicks}
		b.approvals.Store(c.ID, waits[i])
	}
	defer func() {
		for _, c := range req.Calls {
			b.approvals.Delete(c.ID)
		}
	}()
	log := b.log.With(zap.String("session", req.Session))
	shown := showCalls(req)
	a.attachWholeArgs(ctx, log, req, shown)
	parts := approvalParts(req, shown)
	tss := make([]string, len(parts))
	partOf := make([]int, n)
	left := n
	for p, idx := range parts {
		for _, i := range idx {
			partOf[i] = p
		}
		ts, err := b.send(ctx, r.req.channel, r.req.threadTS, "", approvalMessage(req, idx, out, r.req.user, shown))
		if err != nil {
			log.Warn("the approval message could not be posted", zap.Error(slackError(err)))
			for _, i := range idx {
				out[i] = agent.Decision{Outcome: agent.OutcomeDenied, At: time.Now(), Reason: "The approval request could not be posted in Slack."}
				left--
			}
			continue
		}
		tss[p] = ts
	}
	send := func(uctx context.Context, p int, decided []agent.Decision) {
		if tss[p] == "" {
			return
		}
		if _, err := b.send(uctx, r.req.channel, r.req.threadTS, tss[p], approvalMessage(req, parts[p], decided, r.req.user, shown)); err != nil {
			log.Warn("the approval message could not be updated", zap.Error(slackError(err)))
		}
	}
	update := func(uctx context.Context, i int) { send(uctx, partOf[i], out) }
	decide := func(i int, action, user string) {
		d := agent.Decision{Outcome: agent.OutcomeApproved, By: user, At: time.Now()}
		switch action {
		case denyAction:
			d.Outcome = agent.OutcomeDenied
		case approveThreadAction:
			d.Thread = true
			key := approvedKey(r.req.channel, r.req.threadTS, req.Calls[i].Tool)
			if err := b.marks.mark(ctx, key, threadTTL); err != nil {
				log.Warn("an approval for the thread could not be kept", zap.String("tool", req.Calls[i].Tool))
			}
		}
		out[i] = d
		log.Info("tool call decided", zap.String("tool", req.Calls[i].Tool), zap.String("outcome", d.Outcome),
			zap.Bool("thread", d.Thread), zap.String("by", user))
	}
	tick := time.NewTicker(stopPoll)
	defer tick.Stop()
	for left > 0 {
		select {
		case <-ctx.Done():
		case c := <-clicks:
			if out[c.index].Outcome == "" {
				decide(c.index, c.action, c.user)
				left--
				update(ctx, c.index)
			}
			continue
		case <-tick.C:
			changed := map[int]bool{}
			for i := range out {
				if out[i].Outcome != "" {
					continue
				}
				if action, user := b.recordedDecision(ctx, req.Calls[i].ID, waits[i]); user != "" {
					log.Info("decision recorded by another replica", zap.String("tool", req.Calls[i].Tool), zap.String("by", user))
					decide(i, action, user)
					left--
					changed[partOf[i]] = true
				}
			}
			for p := range changed {
				send(ctx, p, out)
			}
			continue
		}
		break
	}
	defer func() {
		for i, c := range req.Calls {
			d := out[i]
			if d.Outcome == "" {
				d.Outcome, d.At = unanswered(ctx), time.Now()
			}
			r.decisions.add(c.Tool, d)
		}
	}()
	if left > 0 {
		// Settled off ctx, which has ended: the buttons must not stay.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		late := slices.Clone(out) // the wait ends only when ctx does
		for i := range late {
			if late[i].Outcome == "" {
				late[i].Outcome = unanswered(ctx)
			}
		}
		for p, idx := range parts {
			if slices.ContainsFunc(idx, func(i int) bool { return out[i].Outcome == "" }) {
				send(uctx, p, late)
			}
		}
	}
	return out
}

// unanswered is the outcome shown for calls still waiting when ctx ended.
func unanswered(ctx context.Context) string {
	if ctx.Err() == context.DeadlineExceeded {
		return agent.OutcomeTimedOut
	}
	return agent.OutcomeCancelled
}

// recordedDecision is a decision on wait another replica recorded, and who
// made it, when that person may decide here; "" when none.
func (b *Bot) recordedDecision(ctx context.Context, wait string, w *approvalWait) (action, user string) {
	for _, action := range approvalActions {
		ok, err := b.marks.marked(ctx, decisionKey(wait, action))
		if err != nil || !ok {
			continue
		}
		for _, u := range append(slices.Clip(w.deciders), b.cfg.Admins...) {
			if ok, err := b.marks.marked(ctx, deciderKey(wait, action, u)); err == nil && ok {
				return action, u
			}
		}
	}
	return "", ""
}

// onApproval handles a click on an approval button.
func (b *Bot) onApproval(action, value, user, channel string) {
	wait, asker, tool := parseApprovalValue(value)
	if v, ok := b.approvals.Load(wait); ok {
		w := v.(*approvalWait)
		if !w.may(user, b.cfg.Admins) {
			b.refuseApproval(channel, user)
			return
		}
		select {
		case w.clicks <- approvalClick{index: w.index, action: action, user: user}:
		default: // a burst of clicks: the first ones decide
		}
		return
	}
	// Not waiting here: the replica running the session finds the click in
	// the store. Who may decide is worked out from the button's value, and
	// checked again where the session runs.
	b.sessions.Add(1)
	go func() {
		defer b.sessions.Done()
		defer b.survive("an approval for another replica")
		var approvers []string
		if b.runner.Tools != nil {
			if t, ok := b.runner.Tools.Tool(tool); ok && t.Approval != nil {
				approvers = t.Approval.Approvers
			}
		}
		w := approvalWait{deciders: b.deciders(b.work, asker, approvers)}
		if asker == "" || !w.may(user, b.cfg.Admins) {
			b.refuseApproval(channel, user)
			return
		}
		sctx, cancel := context.WithTimeout(b.work, b.leaseTTL)
		defer cancel()
		err := b.marks.mark(sctx, deciderKey(wait, action, user), b.leaseTTL)
		if err == nil {
			err = b.marks.mark(sctx, decisionKey(wait, action), b.leaseTTL)
		}
		if err != nil {
			b.log.Warn("an approval click for a session on another replica could not be recorded", zap.String("by", user))
			return
		}
		b.log.Info("approval recorded for the replica running the session", zap.String("wait", wait), zap.String("by", user))
	}()
}

// refuseApproval tells user, alone, that they may not decide.
func (b *Bot) refuseApproval(channel, user string) {
	b.sessions.Add(1)
	go func() {
		defer b.sessions.Done()
		defer b.survive("an approval refusal")
		_ = b.ephemeral(ratelimit.WithPriority(b.work, ratelimit.Note), channel, user, "", approvalRefusal)
	}()
}

// approvalMessage is the approval message for the calls of req at idx,
// with the decisions so far: the buttons of each undecided call, who
// decided the others.
func approvalMessage(req agent.ApprovalRequest, idx []int, decided []agent.Decision, asker string, shown []shownCall) blockkit.Message {
	calls := make([]agent.PendingCall, len(idx))
	for k, i := range idx {
		calls[k] = req.Calls[i]
	}
	intro := fmt.Sprintf("*%s* needs approval to run this tool call:", escape(req.Agent))
	if len(calls) > 1 {
		intro = fmt.Sprintf("*%s* needs approval to run these %d tool calls:", escape(req.Agent), len(calls))
	}
	m := blockkit.Message{Text: "Approval needed: " + escape(callNames(calls))}
	m.Blocks = append(m.Blocks, slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, intro, false, false), nil, nil,
		slackapi.SectionBlockOptionBlockID(approvalBlockID)))
	for k, i := range idx {
		c := calls[k]
		m.Blocks = append(m.Blocks,
			slackapi.NewDividerBlock(),
			slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, callWhat(c), false, false), nil, nil),
			slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, shown[i].block(), false, false), nil, nil))
		if shown[i].short {
			m.Blocks = append(m.Blocks, slackapi.NewContextBlock("", slackapi.NewTextBlockObject(slackapi.MarkdownType, wholeArgsNote(shown[i].file), false, false)))
		}
		if d := decided[i]; d.Outcome != "" {
			m.Blocks = append(m.Blocks, slackapi.NewContextBlock("", slackapi.NewTextBlockObject(slackapi.MarkdownType, decisionLine(d), false, false)))
			continue
		}
		value := approvalValue(c.ID, asker, c.Tool)
		approve := slackapi.NewButtonBlockElement(approveAction, value, slackapi.NewTextBlockObject(slackapi.PlainTextType, "Approve", false, false)).WithStyle(slackapi.StylePrimary)
		deny := slackapi.NewButtonBlockElement(denyAction, value, slackapi.NewTextBlockObject(slackapi.PlainTextType, "Deny", false, false)).WithStyle(slackapi.StyleDanger)
		thread := slackapi.NewButtonBlockElement(approveThreadAction, value, slackapi.NewTextBlockObject(slackapi.PlainTextType, "Approve for this thread", false, false))
		controls := slackapi.NewActionBlock(fmt.Sprintf("slackbot_approval_%d", i+1), approve, deny, thread)
		m.Blocks = append(m.Blocks, controls)
		m.Controls = append(m.Controls, controls)
	}
	return m
}

// callWhat is a call's tool in mrkdwn: server, name, summary.
func callWhat(c agent.PendingCall) string {
	what := fmt.Sprintf("*%s* · `%s`", escape(c.Approval.Server), escapeCode(c.Approval.Tool))
	if s := c.Approval.Summary; s != "" {
		what += "\n" + escape(shortText(s, 200))
	}
	return what
}

// shownCall is a call's arguments as its approval message shows them,
// worked out once per request: escaped and cut to fit a section, whether
// that is less than the whole, and the file holding the whole.
type shownCall struct {
	code  string
	short bool
	file  string // "" until attached, or when it could not be
}

// block is the arguments as a code block.
func (c shownCall) block() string { return "```\n" + c.code + "\n```" }

// showCalls shows the arguments of each call of req: indented, masked and
// redacted (agent.ShowArguments), long values and the whole shortened,
// escaped into a code block that fits its section — escaping can make
// the text several times longer than it was.
func showCalls(req agent.ApprovalRequest) []shownCall {
	out := make([]shownCall, len(req.Calls))
	for i, c := range req.Calls {
		whole := agent.ShowArguments(c.Arguments, math.MaxInt)
		shown := shortText(agent.ShowArguments(c.Arguments, maxShownValue), maxShownArgs)
		code := escapeCode(shown)
		short := shown != whole
		if blockkit.Len(code) > maxShownCode {
			r := []rune(shown)
			for len(r) > 0 && blockkit.Len(code)+len(codeCut) > maxShownCode {
				r = r[:len(r)*9/10]
				code = escapeCode(string(r))
			}
			code, short = code+codeCut, true
		}
		out[i] = shownCall{code: code, short: short}
	}
	return out
}

// wholeArgsNote says where the whole of a call's shortened arguments are:
// in the file attached above, or nowhere when it could not be attached —
// then whoever decides knows they cannot see all of what would run.
func wholeArgsNote(file string) string {
	if file == "" {
		return "_The arguments are shortened, and the whole could not be attached._"
	}
	return "_The arguments are shortened: the whole are in the file " + escape(file) + " above._"
}

// attachWholeArgs uploads, in the thread, the whole arguments of each call
// shown shortened (masked and redacted as shown, never cut), before the
// message that asks about them: an approver can read all of what runs.
// Each such call's file is set in shown; one whose upload failed keeps "".
func (a *slackApprover) attachWholeArgs(ctx context.Context, log *zap.Logger, req agent.ApprovalRequest, shown []shownCall) {
	for i, c := range req.Calls {
		if !shown[i].short {
			continue
		}
		name := fmt.Sprintf("arguments-%d.json", i+1)
		err := a.r.b.uploadFile(ctx, a.r.req.channel, a.r.req.threadTS, name, "Arguments of "+c.Approval.Tool,
			agent.ShowArguments(c.Arguments, math.MaxInt))
		if err != nil {
			log.Warn("the whole arguments of a call could not be attached", zap.String("tool", c.Tool), zap.Error(slackError(err)))
			continue
		}
		shown[i].file = name
	}
}

// maxShownCode bounds a call's arguments as sent, escaped, below Slack's
// 3,000 characters a section; codeCut says the arguments were cut.
const (
	maxShownCode = 2900
	codeCut      = "\n… (shortened)"
)

// Slack refuses a message of more than 50 blocks or about 13,000
// characters of text: the calls of a turn are asked in as many messages
// as they need, at most approvalsPerMessage calls (five blocks each at
// most, with the note on shortened arguments) and about approvalText
// characters in one.
const (
	approvalsPerMessage = 9
	approvalText        = 11000
)

// approvalParts groups the calls of req, by index, into messages Slack
// accepts.
func approvalParts(req agent.ApprovalRequest, shown []shownCall) [][]int {
	var parts [][]int
	var cur []int
	size := 0
	for i, c := range req.Calls {
		// The decision line, once shown, takes about 100 characters.
		n := blockkit.Len(callWhat(c)) + blockkit.Len(shown[i].block()) + len(c.ID) + 250
		if len(cur) > 0 && (len(cur) == approvalsPerMessage || size+n > approvalText) {
			parts, cur, size = append(parts, cur), nil, 0
		}
		cur, size = append(cur, i), size+n
	}
	return append(parts, cur)
}

// decisionLine says who decided what, when.
func decisionLine(d agent.Decision) string {
	at := d.At.UTC().Format("15:04 UTC")
	by := ""
	if d.By != "" {
		by = " by <@" + d.By + ">"
	}
	switch {
	case d.Outcome == agent.OutcomeApproved && d.Thread:
		return ":white_check_mark: Approved for this thread" + by + " at " + at
	case d.Outcome == agent.OutcomeApproved:
		return ":white_check_mark: Approved" + by + " at " + at
	case d.Outcome == agent.OutcomeDenied:
		return ":no_entry_sign: Denied" + by + " at " + at
	case d.Outcome == agent.OutcomeTimedOut:
		return ":hourglass: No decision in time: not run (" + at + ")"
	}
	return ":heavy_minus_sign: Not run: the request was stopped (" + at + ")"
}

// callNames names the calls for the notification text.
func callNames(calls []agent.PendingCall) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Approval.Server + " " + c.Approval.Tool
	}
	return strings.Join(names, ", ")
}

// escapeCode is escape for text inside a code block or span, which a
// backtick would end.
func escapeCode(s string) string { return strings.ReplaceAll(escape(s), "`", "ˋ") }

// shortText cuts s to max characters, saying so.
func shortText(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + fmt.Sprintf("\n… (shortened: %d more characters)", len(r)-max)
}

// approvalBlockID marks the first block of an approval message, which a
// later session's thread history leaves out: it is no answer.
const approvalBlockID = "slackbot_approval"

// isApproval reports whether m is an approval message.
func isApproval(m slackapi.Message) bool {
	bs := m.Blocks.BlockSet
	if len(bs) == 0 {
		return false
	}
	s, ok := bs[0].(*slackapi.SectionBlock)
	return ok && s.BlockID == approvalBlockID
}

// approvals are the calls waiting on this replica, by wait id.
type approvals = sync.Map

// decisionLog is what a run's calls were decided, for its record.
type decisionLog struct {
	mu   sync.Mutex
	list []state.Approval
}

func (l *decisionLog) add(tool string, d agent.Decision) {
	l.mu.Lock()
	l.list = append(l.list, state.Approval{Tool: tool, Decision: d.Outcome, By: d.By, Thread: d.Thread, At: d.At})
	l.mu.Unlock()
}

// all returns the decisions so far.
func (l *decisionLog) all() []state.Approval {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.list)
}
