package slack

import (
	"slices"
	"strconv"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/form"
)

// A question's form as a Slack modal: the inputs built from the fields,
// and the submission read back, checked and answered (see elicit.go).

// openWait bounds how long a submission waits for the answer of the
// views.open that showed its modal.
const openWait = time.Second

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
	switch {
	case typedChoice(f):
		// Slack shows at most maxOptions options: more are typed, one a
		// line, and the schema checks them.
		e := slackapi.NewPlainTextInputBlockElement(plain(clip("Type "+choiceHint(f), 150)), elicitValue)
		e.Multiline = f.Kind == form.MultiSelect
		e.InitialValue = strings.Join(f.Default, "\n")
		return e
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
	case a.Value != "" && f.Kind == form.MultiSelect:
		var out []string
		for line := range strings.SplitSeq(a.Value, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				out = append(out, line)
			}
		}
		return out
	case a.Value != "":
		return []string{a.Value}
	}
	return nil
}

// maxOptions is the most options Slack shows in a select.
const maxOptions = 100

// typedChoice reports whether f is a choice of more options than a select
// shows, so that its values are typed.
func typedChoice(f form.Field) bool {
	return (f.Kind == form.Select || f.Kind == form.MultiSelect) && len(f.Options) > maxOptions
}

// choiceHint is the placeholder of a typed choice.
func choiceHint(f form.Field) string {
	if f.Kind == form.MultiSelect {
		return "the values, one a line"
	}
	return "the value"
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
