package blockkit

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit/internal/jsonish"
)

// Step 3 of Repair, continued: interactive elements. Each is checked
// against Slack's rules and repaired where a fix keeps what the model meant
// (a date written another way, an overflow menu with too many options as a
// select menu); otherwise its words become text after the block that held
// it.

// Limits of the parts of blocks that only Repair builds.
const (
	buttonTextMax     = 75
	actionsMax        = 25
	altTextMax        = 2000
	imageTitleMax     = 2000
	urlMax            = 3000
	actionIDMax       = 255
	buttonValueMax    = 2000
	optionTextMax     = 75
	optionValueMax    = 150
	optionsMax        = 100
	overflowMin       = 2
	overflowMax       = 5
	choicesMax        = 10 // checkboxes and radio buttons
	placeholderMax    = 150
	videoTitleMax     = 199 // "less than 200 characters"
	videoAuthorMax    = 49  // "less than 50 characters"
	videoDescMax      = 199
	datePickerLayout  = "2006-01-02"
	timePickerLayout  = "15:04"
	selectTypesSuffix = "_select"
)

// actionElements are the interactive elements a message may hold besides
// buttons, as the slack-go types they decode to.
var actionElements = map[string]func() slack.BlockElement{
	"overflow":                   func() slack.BlockElement { return &slack.OverflowBlockElement{} },
	"datepicker":                 func() slack.BlockElement { return &slack.DatePickerBlockElement{} },
	"timepicker":                 func() slack.BlockElement { return &slack.TimePickerBlockElement{} },
	"checkboxes":                 func() slack.BlockElement { return &slack.CheckboxGroupsBlockElement{} },
	"radio_buttons":              func() slack.BlockElement { return &slack.RadioButtonsBlockElement{} },
	"static_select":              func() slack.BlockElement { return &slack.SelectBlockElement{} },
	"external_select":            func() slack.BlockElement { return &slack.SelectBlockElement{} },
	"users_select":               func() slack.BlockElement { return &slack.SelectBlockElement{} },
	"conversations_select":       func() slack.BlockElement { return &slack.SelectBlockElement{} },
	"channels_select":            func() slack.BlockElement { return &slack.SelectBlockElement{} },
	"multi_static_select":        func() slack.BlockElement { return &slack.MultiSelectBlockElement{} },
	"multi_external_select":      func() slack.BlockElement { return &slack.MultiSelectBlockElement{} },
	"multi_users_select":         func() slack.BlockElement { return &slack.MultiSelectBlockElement{} },
	"multi_conversations_select": func() slack.BlockElement { return &slack.MultiSelectBlockElement{} },
	"multi_channels_select":      func() slack.BlockElement { return &slack.MultiSelectBlockElement{} },
}

// element rebuilds one interactive element of an actions block or a
// section accessory. It returns the element, nil when it cannot be kept,
// and text to show after the block: the words of an element that could not
// be kept, or of a part that had to go.
func (r *repairer) element(n *jsonish.Value, path string, actionIDs map[string]bool) (slack.BlockElement, string) {
	if n.Kind != jsonish.Object {
		return nil, r.elementText(n, path, "not an element")
	}
	n = n.Copy()
	typ := n.GetString("type")
	if typ == "" && n.Has("text") && (n.Has("url") || n.Has("action_id") || n.Has("value")) {
		r.note(path, "type_inferred", "missing element type inferred as button")
		typ = "button"
		n.Set("type", jsonish.NewString(typ))
	}
	if typ != "button" && actionElements[typ] == nil {
		return nil, r.elementText(n, path, fmt.Sprintf("%q element cannot be shown in a message", typ))
	}
	r.actionID(n, path, actionIDs)
	var after string
	switch typ {
	case "button":
		return r.button(n, path)
	case "overflow":
		if el, text, done := r.overflow(n, path, actionIDs); done {
			return el, text
		}
	case "datepicker":
		after = r.pickerValue(n, path, "initial_date", datePickerLayout, dateLayouts)
	case "timepicker":
		after = r.pickerValue(n, path, "initial_time", timePickerLayout, timeLayouts)
	case "checkboxes", "radio_buttons", "static_select", "multi_static_select":
		if !r.fixOptions(n, path, typ) {
			return nil, r.elementText(n, path, typ+" without options Slack accepts")
		}
	}
	if p := n.Get("placeholder"); p != nil && p.Kind == jsonish.String {
		n.Set("placeholder", plainTextValue(p.Str))
	}
	el := actionElements[typ]()
	if err := json.Unmarshal(n.Marshal(), el); err != nil {
		return nil, r.elementText(n, path, "unreadable "+typ)
	}
	v := &validator{}
	v.element("", el)
	if len(v.problems) > 0 {
		return nil, r.elementText(n, path, firstLine(v.problems[0]))
	}
	return el, after
}

// elementText is the text an element that cannot be kept is shown as.
func (r *repairer) elementText(n *jsonish.Value, path, reason string) string {
	txt := readable(n)
	if strings.TrimSpace(txt) == "" {
		r.note(path, "empty_dropped", reason+"; no readable text")
		return ""
	}
	r.note(path, "element_converted", reason+"; its words are kept as text")
	return txt
}

// plainTextValue is a plain_text text object holding s.
func plainTextValue(s string) *jsonish.Value {
	return &jsonish.Value{Kind: jsonish.Object, Keys: []string{"type", "text"},
		Vals: []*jsonish.Value{jsonish.NewString(slack.PlainTextType), jsonish.NewString(s)}}
}

// actionID keeps an action_id Slack accepts, unique in its block.
func (r *repairer) actionID(n *jsonish.Value, path string, ids map[string]bool) {
	id := n.Get("action_id").Text()
	if id == "" || Len(id) > actionIDMax-4 {
		n.Del("action_id")
		return
	}
	base := id
	for k := 2; ids[id]; k++ {
		id = base + "-" + strconv.Itoa(k)
	}
	if id != base {
		r.note(join(path, "action_id"), "action_id_changed", fmt.Sprintf("duplicate action_id %q renamed %q", base, id))
	}
	ids[id] = true
	n.Set("action_id", jsonish.NewString(id))
}

// button rebuilds a button: a plain_text label of at most 75 characters,
// an http(s) URL if any. A longer label is shortened on the button and
// shown whole after it; a link button with a long label or a URL Slack
// would refuse becomes the link itself.
func (r *repairer) button(n *jsonish.Value, path string) (slack.BlockElement, string) {
	tv := n.Get("text")
	if tv == nil {
		tv = n.Get("label")
	}
	t := r.textObject(tv, join(path, "text"), slack.PlainTextType)
	url := strings.TrimSpace(n.GetString("url"))
	if t == nil {
		return nil, r.elementText(n, path, "button without a label")
	}
	label := collapseSpaces(t.Text)
	switch {
	case url != "" && !isWebURL(url):
		r.note(path, "element_converted", "button URL Slack would refuse (http or https, at most 3000 characters); kept as a link")
		return nil, slackLink(url, label)
	case url != "" && Len(label) > buttonTextMax:
		r.note(join(path, "text"), "label_moved", fmt.Sprintf("button label over %d characters: shown as a link with its whole label", buttonTextMax))
		return nil, slackLink(url, label)
	}
	after := ""
	if Len(label) > buttonTextMax {
		r.note(join(path, "text"), "label_moved", fmt.Sprintf("button label over %d characters: shortened on the button, shown whole after it", buttonTextMax))
		after = escapeBare(label)
		label, _ = clampText(label, buttonTextMax, false)
	}
	t.Text = label
	b := &slack.ButtonBlockElement{Type: slack.METButton, Text: t, URL: url, ActionID: n.GetString("action_id")}
	if v := n.Get("value").Text(); v != "" && Len(v) <= buttonValueMax {
		b.Value = v
	}
	if s := n.GetString("style"); s == "primary" || s == "danger" {
		b.Style = slack.Style(s)
	}
	return b, after
}

// looseOptionsLabel labels the group that holds a select menu's options
// given beside its option groups.
const looseOptionsLabel = "Options"

// fixOptions makes the options of a select menu, checkboxes or radio
// buttons ones Slack accepts: plain_text labels, a value for each (the label
// when missing), initial options that are among them. A select menu takes
// options or option groups, not both: options given beside groups become a
// group of their own, first. It reports false when no fix keeps every
// option (none, too many, a label too long).
func (r *repairer) fixOptions(n *jsonish.Value, path, typ string) bool {
	limit := optionsMax
	if typ == "checkboxes" || typ == "radio_buttons" {
		limit = choicesMax
	}
	if groups := n.Get("option_groups"); groups != nil && groups.Kind == jsonish.Array && len(groups.Vals) > 0 && strings.HasSuffix(typ, selectTypesSuffix) {
		fixed := &jsonish.Value{Kind: jsonish.Array}
		all := &jsonish.Value{Kind: jsonish.Array} // every option, for the initial ones
		if loose := n.Get("options"); !isEmptyValue(loose) {
			opts, ok := r.options(loose, join(path, "options"), limit, false)
			if !ok {
				return false
			}
			r.note(join(path, "options"), "element_fixed", fmt.Sprintf("options given beside option_groups put in a group of their own, labelled %q", looseOptionsLabel))
			fg := &jsonish.Value{Kind: jsonish.Object}
			fg.Set("label", plainTextValue(looseOptionsLabel))
			fg.Set("options", opts)
			fixed.Vals = append(fixed.Vals, fg)
			all.Vals = append(all.Vals, opts.Vals...)
		}
		for i, g := range groups.Vals {
			opts, ok := r.options(g.Get("options"), index(join(path, "option_groups"), i), limit, false)
			label := r.textObject(g.Get("label"), join(index(join(path, "option_groups"), i), "label"), slack.PlainTextType)
			if !ok || label == nil || Len(label.Text) > optionTextMax {
				return false
			}
			fg := &jsonish.Value{Kind: jsonish.Object}
			fg.Set("label", plainTextValue(label.Text))
			fg.Set("options", opts)
			fixed.Vals = append(fixed.Vals, fg)
			all.Vals = append(all.Vals, opts.Vals...)
		}
		n.Set("option_groups", fixed)
		n.Del("options")
		r.keepInitial(n, path, all)
		return len(fixed.Vals) <= optionsMax
	}
	opts, ok := r.options(n.Get("options"), join(path, "options"), limit, false)
	if !ok {
		return false
	}
	n.Set("options", opts)
	n.Del("option_groups")
	r.keepInitial(n, path, opts)
	return true
}

// options rebuilds a list of option objects, or reports that it cannot.
// Only an overflow menu's options may link somewhere (withURL).
func (r *repairer) options(v *jsonish.Value, path string, limit int, withURL bool) (*jsonish.Value, bool) {
	items := v.Items()
	if len(items) == 0 || len(items) > limit {
		return nil, false
	}
	out := &jsonish.Value{Kind: jsonish.Array}
	for i, o := range items {
		op := index(path, i)
		var text string
		var desc *slack.TextBlockObject
		value := ""
		if o.Kind == jsonish.Object {
			t := r.textObject(o.Get("text"), join(op, "text"), slack.PlainTextType)
			if t == nil {
				t = r.textObject(o.Get("label"), join(op, "label"), slack.PlainTextType)
			}
			if t != nil {
				text = t.Text
			}
			value = o.Get("value").Text()
			desc = r.textObject(o.Get("description"), join(op, "description"), slack.PlainTextType)
		} else {
			text = o.Text()
		}
		text = collapseSpaces(text)
		if text == "" || Len(text) > optionTextMax || desc != nil && Len(desc.Text) > optionTextMax {
			return nil, false
		}
		if value == "" || Len(value) > optionValueMax {
			value, _ = clampText(text, optionValueMax, false)
			r.note(join(op, "value"), "element_fixed", "option without a usable value given its label as value")
		}
		fo := &jsonish.Value{Kind: jsonish.Object}
		fo.Set("text", plainTextValue(text))
		fo.Set("value", jsonish.NewString(value))
		if desc != nil {
			fo.Set("description", plainTextValue(desc.Text))
		}
		if u := o.GetString("url"); u != "" {
			if !withURL || !isWebURL(u) {
				return nil, false
			}
			fo.Set("url", jsonish.NewString(u))
		}
		out.Vals = append(out.Vals, fo)
	}
	return out, true
}

// keepInitial drops initial options that are not among opts, which Slack
// refuses, matching them by value or label.
func (r *repairer) keepInitial(n *jsonish.Value, path string, opts *jsonish.Value) {
	find := func(o *jsonish.Value) *jsonish.Value {
		for _, c := range opts.Vals {
			if o.Get("value").Text() == c.GetString("value") || readable(o.Get("text")) == c.Get("text").GetString("text") {
				return c
			}
		}
		return nil
	}
	if io := n.Get("initial_option"); io != nil {
		if c := find(io); c != nil {
			n.Set("initial_option", c)
		} else {
			n.Del("initial_option")
			r.note(join(path, "initial_option"), "element_fixed", "initial_option that is not among the options dropped")
		}
	}
	if ios := n.Get("initial_options"); ios != nil {
		kept := &jsonish.Value{Kind: jsonish.Array}
		for _, o := range ios.Items() {
			if c := find(o); c != nil {
				kept.Vals = append(kept.Vals, c)
			}
		}
		if len(kept.Vals) != len(ios.Items()) {
			r.note(join(path, "initial_options"), "element_fixed", "initial_options that are not among the options dropped")
		}
		if len(kept.Vals) == 0 {
			n.Del("initial_options")
		} else {
			n.Set("initial_options", kept)
		}
	}
}

// overflow rebuilds an overflow menu, which Slack accepts with 2 to 5
// options: one option becomes a button, more than five a select menu (or,
// when options link somewhere, which a select cannot, a list of links).
// done reports that the element is final.
func (r *repairer) overflow(n *jsonish.Value, path string, actionIDs map[string]bool) (el slack.BlockElement, text string, done bool) {
	opts, ok := r.options(n.Get("options"), join(path, "options"), optionsMax, true)
	if !ok {
		return nil, r.elementText(n, path, "overflow menu without options Slack accepts"), true
	}
	withURL := false
	for _, o := range opts.Vals {
		withURL = withURL || o.Has("url")
	}
	switch {
	case len(opts.Vals) < overflowMin:
		o := opts.Vals[0]
		r.note(path, "element_converted", "overflow menu with one option shown as a button")
		b := &jsonish.Value{Kind: jsonish.Object}
		b.Set("type", jsonish.NewString("button"))
		b.Set("text", o.Get("text"))
		b.Set("value", o.Get("value"))
		if o.Has("url") {
			b.Set("url", o.Get("url"))
		}
		if id := n.GetString("action_id"); id != "" {
			b.Set("action_id", jsonish.NewString(id))
		}
		el, text := r.button(b, path)
		return el, text, true
	case len(opts.Vals) > overflowMax && withURL:
		var lines []string
		for _, o := range opts.Vals {
			lines = append(lines, "• "+slackLink(o.GetString("url"), o.Get("text").GetString("text")))
		}
		r.note(path, "element_converted", fmt.Sprintf("overflow menu with %d linked options (at most %d) shown as a list of links", len(opts.Vals), overflowMax))
		return nil, strings.Join(lines, "\n"), true
	case len(opts.Vals) > overflowMax:
		r.note(path, "element_converted", fmt.Sprintf("overflow menu with %d options (at most %d) shown as a select menu", len(opts.Vals), overflowMax))
		n.Set("type", jsonish.NewString("static_select"))
		n.Set("options", opts)
		el, text := r.element(n, path, map[string]bool{})
		return el, text, true
	}
	n.Set("options", opts)
	return nil, "", false
}

// Layouts a date or time picker's initial value is read in when it is not
// in the one Slack accepts.
var (
	dateLayouts = []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04", "2006/01/02", "2006.01.02", "20060102",
		"January 2, 2006", "Jan 2, 2006", "2 January 2006", "2 Jan 2006", "Monday, January 2, 2006", "2006-1-2"}
	timeLayouts = []string{"15:04:05", "3:04 PM", "3:04PM", "3:04 pm", "3:04pm", "3 PM", "3PM", "15h04", "15.04", "15:4", "1504"}
)

// pickerValue makes a date or time picker's initial value one Slack
// accepts (layout): rewritten when it reads in another layout, dropped when
// it reads in none. It returns the words to show after the picker when the
// value had to go.
func (r *repairer) pickerValue(n *jsonish.Value, path, key, layout string, layouts []string) string {
	v := n.Get(key)
	if v == nil {
		return ""
	}
	raw := strings.TrimSpace(v.Text())
	if _, err := time.Parse(layout, raw); err == nil && len(raw) == len(layout) {
		return ""
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, raw); err == nil {
			n.Set(key, jsonish.NewString(t.Format(layout)))
			r.note(join(path, key), "element_fixed", fmt.Sprintf("%s %q rewritten as %q", key, raw, t.Format(layout)))
			return ""
		}
	}
	n.Del(key)
	if raw == "" {
		r.note(join(path, key), "element_fixed", "empty "+key+" dropped")
		return ""
	}
	r.note(join(path, key), "element_fixed", fmt.Sprintf("%s %q is not a %s; dropped and shown as text", key, raw, layout))
	return escapeBare(raw)
}

// actions rebuilds an actions block: elements Slack cannot show, and words
// an element had to give up, become a section of text after it, and more
// than 25 elements go into further blocks.
func (r *repairer) actions(n *jsonish.Value, path, id string) []slack.Block {
	ev, epath := n.Get("elements"), join(path, "elements")
	if ev == nil {
		ev, epath = n.Get("buttons"), join(path, "buttons")
	}
	if ev == nil && n.GetString("type") == "button" {
		// A lone button written as a block.
		ev, epath = &jsonish.Value{Kind: jsonish.Array, Vals: []*jsonish.Value{n}}, path
	}
	var els []slack.BlockElement
	var texts []string
	actionIDs := map[string]bool{}
	for i, item := range ev.Items() {
		ip := epath
		if ev.Kind == jsonish.Array && epath != path {
			ip = index(epath, i)
		}
		el, txt := r.element(item, ip, actionIDs)
		if el != nil {
			els = append(els, el)
		}
		if strings.TrimSpace(txt) != "" {
			texts = append(texts, txt)
		}
	}
	var out []slack.Block
	for i := 0; i < len(els); i += actionsMax {
		chunk := els[i:min(i+actionsMax, len(els))]
		out = append(out, &slack.ActionBlock{Type: slack.MBTAction, BlockID: id, Elements: &slack.BlockElements{ElementSet: chunk}})
		id = ""
	}
	if len(out) > 1 {
		r.note(epath, "actions_split", fmt.Sprintf("%d elements spread over %d actions blocks (at most %d each)", len(els), len(out), actionsMax))
	}
	if len(texts) > 0 {
		out = append(out, r.textSections(strings.Join(texts, "\n"), path)...)
	}
	if len(out) == 0 {
		r.note(path, "empty_dropped", "actions without elements")
	}
	return out
}

// accessory rebuilds a section accessory. One that cannot be shown is
// returned as sections of its text instead, as are words it gave up.
func (r *repairer) accessory(n *jsonish.Value, path string) (*slack.Accessory, []slack.Block) {
	if n.Kind == jsonish.Object {
		typ := n.GetString("type")
		if typ == "image" || (typ == "" && (n.Has("image_url") || n.Has("slack_file"))) {
			if img, rest := r.imageElement(n, path); img != nil {
				return slack.NewAccessory(img), r.textSections(rest, join(path, "alt_text"))
			}
		} else {
			el, txt := r.element(n, path, map[string]bool{})
			var after []slack.Block
			if strings.TrimSpace(txt) != "" {
				after = r.textSections(txt, path)
			}
			if el != nil {
				return slack.NewAccessory(el), after
			}
			return nil, after
		}
	}
	txt := readable(n)
	if strings.TrimSpace(txt) == "" {
		r.note(path, "empty_dropped", "empty accessory")
		return nil, nil
	}
	r.note(path, "accessory_converted", "accessory without its required fields kept as text")
	return nil, r.textSections(txt, path)
}
