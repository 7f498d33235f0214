package blockkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// ValidationError lists every problem found in a message, so one round of
// repair can fix them all. Each problem names its place and the limit, e.g.
// "blocks[3] (section): text is 3120 characters; Slack allows 3000".
type ValidationError struct {
	Problems []string
}

// Error joins the problems into one line.
func (e *ValidationError) Error() string {
	return "blockkit: invalid message: " + strings.Join(e.Problems, "; ")
}

// Validate checks m against the limits Slack enforces on chat.postMessage
// (Slack's own, e.g. 3000 for section text, not this package's tighter
// clamps) plus this package's per-message budget of MaxMessageChars block
// characters. It returns nil or a *ValidationError listing every problem.
func Validate(m Message) error {
	v := &validator{}
	v.message(m.Text, m.Blocks, nil)
	return v.err()
}

// ValidateJSON validates a raw chat.postMessage-style body
// {"text": "...", "blocks": [...]} like Validate, and also reports what typed
// values cannot show: block types slack-go does not know, text given as a
// string where Slack needs a text object, and blocks that do not decode.
func ValidateJSON(payload []byte) error {
	v := &validator{}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(payload, &top); err != nil {
		v.add("payload", "not a JSON object: %v", err)
		return v.err()
	}
	var text string
	if raw, ok := top["text"]; ok {
		if err := json.Unmarshal(raw, &text); err != nil {
			v.add("text", "not a string")
		}
	}
	var raws []json.RawMessage
	if raw, ok := top["blocks"]; ok && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, &raws); err != nil {
			v.add("blocks", "not an array")
		}
	}
	blocks := make([]slack.Block, len(raws))
	skip := make([]bool, len(raws))
	for i, raw := range raws {
		blocks[i], skip[i] = v.decodeBlock(i, raw)
	}
	v.message(text, blocks, skip)
	return v.err()
}

// decodeBlock decodes one raw block, reporting why it cannot be checked
// further (skip) when it does not decode or is of an unknown type.
func (v *validator) decodeBlock(i int, raw json.RawMessage) (slack.Block, bool) {
	var probe struct {
		Type   *string         `json:"type"`
		Text   json.RawMessage `json:"text"`
		Fields json.RawMessage `json:"fields"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		v.add(fmt.Sprintf("blocks[%d]", i), "not a JSON object")
		return nil, true
	}
	if probe.Type == nil {
		v.add(fmt.Sprintf("blocks[%d]", i), "has no type")
		return nil, true
	}
	path := fmt.Sprintf("blocks[%d] (%s)", i, *probe.Type)
	if len(probe.Text) > 0 && probe.Text[0] == '"' && *probe.Type != "markdown" {
		v.add(path, `text is a string; Slack needs a text object {"type": "mrkdwn", "text": "..."}`)
		return nil, true
	}
	var decoded slack.Blocks
	if err := decoded.UnmarshalJSON(append(append([]byte{'['}, raw...), ']')); err != nil {
		v.add(path, "malformed: %v", err)
		return nil, true
	}
	b := decoded.BlockSet[0]
	if _, ok := b.(*slack.UnknownBlock); ok {
		v.add(path, "unknown block type %q", *probe.Type)
		return nil, true
	}
	return b, false
}

type validator struct {
	problems []string
}

func (v *validator) add(path, format string, args ...any) {
	v.problems = append(v.problems, path+": "+fmt.Sprintf(format, args...))
}

func (v *validator) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: v.problems}
}

// message checks a message; skip marks blocks already reported as undecodable.
func (v *validator) message(text string, blocks []slack.Block, skip []bool) {
	if strings.TrimSpace(text) == "" {
		v.add("text", "empty; Slack needs it as the notification fallback")
	} else if n := Len(text); n > MessageTextMax {
		v.add("text", "is %d characters; Slack truncates past %d", n, MessageTextMax)
	}
	if len(blocks) > MaxBlocks {
		v.add("blocks", "%d blocks; Slack allows %d a message", len(blocks), MaxBlocks)
	}
	ids := map[string]int{}
	tables, markdownChars, total := 0, 0, 0
	for i, b := range blocks {
		if skip != nil && skip[i] {
			continue
		}
		if b == nil {
			v.add(fmt.Sprintf("blocks[%d]", i), "null block")
			continue
		}
		path := fmt.Sprintf("blocks[%d] (%s)", i, b.BlockType())
		if b.BlockType() == "" {
			v.add(path, "type is empty")
		}
		if id := b.ID(); id != "" {
			if n := Len(id); n > BlockIDMax {
				v.add(path, "block_id is %d characters; Slack allows %d", n, BlockIDMax)
			}
			if j, dup := ids[id]; dup {
				v.add(path, "block_id %q repeats blocks[%d]; Slack needs it unique", id, j)
			} else {
				ids[id] = i
			}
		}
		switch b := b.(type) {
		case *slack.SectionBlock:
			total += v.section(path, b)
		case slack.SectionBlock:
			total += v.section(path, &b)
		case *slack.HeaderBlock:
			total += v.header(path, b)
		case slack.HeaderBlock:
			total += v.header(path, &b)
		case *slack.ContextBlock:
			total += v.context(path, b)
		case slack.ContextBlock:
			total += v.context(path, &b)
		case *slack.TableBlock:
			tables++
			total += v.table(path, b, tables)
		case slack.TableBlock:
			tables++
			total += v.table(path, &b, tables)
		case *slack.ActionBlock:
			v.actions(path, b)
		case *slack.ContextActionsBlock:
			total += v.contextActions(path, b)
		case *slack.ImageBlock:
			v.image(path, b)
		case *slack.VideoBlock:
			v.video(path, b)
		case *slack.RichTextBlock:
			v.richText(path, b)
		case *slack.MarkdownBlock:
			markdownChars += v.markdown(path, b.Text)
		case slack.MarkdownBlock:
			markdownChars += v.markdown(path, b.Text)
		case *slack.UnknownBlock, slack.UnknownBlock:
			v.add(path, "unknown block type")
		}
	}
	if markdownChars > MarkdownBlockMax {
		v.add("blocks", "markdown blocks total %d characters; Slack allows %d", markdownChars, MarkdownBlockMax)
	}
	if total += markdownChars; total > MaxMessageChars {
		v.add("blocks", "block text totals %d characters; the budget is %d a message (Slack answers msg_blocks_too_long near 13000)", total, MaxMessageChars)
	}
}

// textObject checks one text object and returns its length.
func (v *validator) textObject(path, what string, t *slack.TextBlockObject, max int, plainOnly bool) int {
	switch {
	case t.Type != slack.PlainTextType && t.Type != slack.MarkdownType:
		v.add(path, "%s type is %q; Slack accepts plain_text or mrkdwn", what, t.Type)
	case plainOnly && t.Type != slack.PlainTextType:
		v.add(path, "%s type is %q; a header takes plain_text", what, t.Type)
	}
	n := Len(t.Text)
	if strings.TrimSpace(t.Text) == "" {
		v.add(path, "%s is empty; Slack needs at least 1 character", what)
	} else if n > max {
		v.add(path, "%s is %d characters; Slack allows %d", what, n, max)
	}
	return n
}

func (v *validator) section(path string, b *slack.SectionBlock) int {
	if b.Text == nil && len(b.Fields) == 0 {
		v.add(path, "has neither text nor fields; Slack needs one")
	}
	if a := b.Accessory; a != nil {
		for _, el := range []slack.BlockElement{a.ImageElement, a.ButtonElement, a.OverflowElement, a.DatePickerElement,
			a.TimePickerElement, a.RadioButtonsElement, a.SelectElement, a.MultiSelectElement, a.CheckboxGroupsBlockElement} {
			if el != nil && !reflect.ValueOf(el).IsNil() {
				v.element(path+" accessory", el)
			}
		}
	}
	n := 0
	if b.Text != nil {
		n += v.textObject(path, "text", b.Text, SlackSectionTextMax, false)
	}
	if len(b.Fields) > MaxFields {
		v.add(path, "has %d fields; Slack allows %d", len(b.Fields), MaxFields)
	}
	for k, f := range b.Fields {
		what := fmt.Sprintf("fields[%d] text", k)
		if f == nil {
			v.add(path, "%s is missing", what)
			continue
		}
		n += v.textObject(path, what, f, FieldTextMax, false)
	}
	return n
}

func (v *validator) header(path string, b *slack.HeaderBlock) int {
	if b.Text == nil {
		v.add(path, "has no text; Slack needs plain_text of 1 to %d characters", HeaderTextMax)
		return 0
	}
	return v.textObject(path, "text", b.Text, HeaderTextMax, true)
}

func (v *validator) context(path string, b *slack.ContextBlock) int {
	els := b.ContextElements.Elements
	if len(els) == 0 || len(els) > MaxContextElements {
		v.add(path, "has %d elements; Slack allows 1 to %d", len(els), MaxContextElements)
	}
	n := 0
	for k, e := range els {
		what := fmt.Sprintf("elements[%d] text", k)
		switch e := e.(type) {
		case *slack.TextBlockObject:
			n += v.textObject(path, what, e, ContextTextMax, false)
		case slack.TextBlockObject:
			n += v.textObject(path, what, &e, ContextTextMax, false)
		case *slack.ImageBlockElement:
			v.element(path+" "+fmt.Sprintf("elements[%d]", k), e)
		default:
			v.add(path, "elements[%d] is %T; a context takes text objects and images", k, e)
		}
	}
	return n
}

func (v *validator) table(path string, b *slack.TableBlock, nth int) int {
	if nth > 1 {
		v.add(path, "is table %d of this message; Slack allows 1 (only_one_table_allowed)", nth)
	}
	if len(b.Rows) == 0 || len(b.Rows) > TableMaxRows {
		v.add(path, "has %d rows; Slack allows 1 to %d", len(b.Rows), TableMaxRows)
	}
	if len(b.ColumnSettings) > TableMaxCells {
		v.add(path, "has %d column_settings; Slack allows %d", len(b.ColumnSettings), TableMaxCells)
	}
	n := 0
	for r, row := range b.Rows {
		if len(row) > TableMaxCells {
			v.add(path, "rows[%d] has %d cells; Slack allows %d", r, len(row), TableMaxCells)
		}
		for c, cell := range row {
			switch cell := cell.(type) {
			case nil:
				v.add(path, "rows[%d][%d] is null; Slack needs a raw_text or rich_text cell", r, c)
			case *slack.TableRawTextCell:
				if cell.Text == "" {
					v.add(path, "rows[%d][%d] text is empty; Slack needs at least 1 character", r, c)
				}
				n += Len(cell.Text)
			case *slack.TableRawNumberCell:
				n += Len(cell.Text)
			}
		}
	}
	if n > TableMaxChars {
		v.add(path, "cells total %d characters; Slack allows %d", n, TableMaxChars)
	}
	return n
}

// Limits of interactive and media elements.
const (
	buttonTextLimit  = 75
	optionTextLimit  = 75
	optionValueLimit = 150
	placeholderLimit = 150
	urlLimit         = 3000
	valueLimit       = 2000
	actionIDLimit    = 255
	altTextLimit     = 2000
	videoTextLimit   = 199
	videoAuthorLimit = 49
	// labelLimit bounds an accessibility_label.
	labelLimit = 75
	// maxContextActions is how many elements a context_actions block holds.
	maxContextActions = 5
)

// contextActions checks a context_actions block: one to five feedback_buttons
// and icon_button elements, the only elements it takes. It returns the
// length of the buttons' texts.
func (v *validator) contextActions(path string, b *slack.ContextActionsBlock) int {
	var els []slack.BlockElement
	if b.Elements != nil {
		els = b.Elements.ElementSet
	}
	if len(els) == 0 || len(els) > maxContextActions {
		v.add(path, "has %d elements; Slack allows 1 to %d", len(els), maxContextActions)
	}
	n := 0
	for k, el := range els {
		at := fmt.Sprintf("%s elements[%d]", path, k)
		switch e := el.(type) {
		case *slack.FeedbackButtonsBlockElement:
			n += v.feedbackButtons(at, e)
		case *slack.IconButtonBlockElement:
			n += v.iconButton(at, e)
		default:
			v.add(at, "is %T; a context_actions block takes feedback_buttons and icon_button elements", el)
		}
	}
	return n
}

// plainText checks a required plain_text object of at most max characters
// (0: no limit of its own) and returns its length.
func (v *validator) plainText(path, what string, t *slack.TextBlockObject, max int) int {
	switch {
	case t == nil:
		v.add(path, "%s is missing; Slack needs plain_text", what)
		return 0
	case t.Type != slack.PlainTextType:
		v.add(path, "%s type is %q; Slack needs plain_text", what, t.Type)
	case strings.TrimSpace(t.Text) == "":
		v.add(path, "%s is empty", what)
	case max > 0 && Len(t.Text) > max:
		v.add(path, "%s is %d characters; Slack allows %d", what, Len(t.Text), max)
	}
	return Len(t.Text)
}

// lengthAtMost reports a string field longer than max.
func (v *validator) lengthAtMost(path, what, s string, max int) {
	if n := Len(s); n > max {
		v.add(path, "%s is %d characters; Slack allows %d", what, n, max)
	}
}

// feedbackButtons checks a feedback_buttons element: both buttons, each
// with plain_text of at most 75 characters and a value of 1 to 2000.
func (v *validator) feedbackButtons(path string, e *slack.FeedbackButtonsBlockElement) int {
	v.lengthAtMost(path, "action_id", e.ActionID, actionIDLimit)
	n := 0
	for _, side := range []struct {
		name string
		b    *slack.FeedbackButton
	}{{"positive_button", e.PositiveButton}, {"negative_button", e.NegativeButton}} {
		if side.b == nil {
			v.add(path, "%s is missing; Slack needs both buttons", side.name)
			continue
		}
		n += v.plainText(path, side.name+" text", side.b.Text, buttonTextLimit)
		if side.b.Value == "" {
			v.add(path, "%s value is empty; Slack needs 1 to %d characters", side.name, valueLimit)
		}
		v.lengthAtMost(path, side.name+" value", side.b.Value, valueLimit)
		v.lengthAtMost(path, side.name+" accessibility_label", side.b.AccessibilityLabel, labelLimit)
	}
	return n
}

// iconButton checks an icon_button element. Slack draws one icon, trash.
func (v *validator) iconButton(path string, e *slack.IconButtonBlockElement) int {
	if e.Icon != "trash" {
		v.add(path, "icon is %q; Slack has only \"trash\"", e.Icon)
	}
	v.lengthAtMost(path, "action_id", e.ActionID, actionIDLimit)
	v.lengthAtMost(path, "value", e.Value, valueLimit)
	v.lengthAtMost(path, "accessibility_label", e.AccessibilityLabel, labelLimit)
	return v.plainText(path, "text", e.Text, 0)
}

func (v *validator) actions(path string, b *slack.ActionBlock) {
	var els []slack.BlockElement
	if b.Elements != nil {
		els = b.Elements.ElementSet
	}
	if len(els) == 0 || len(els) > 25 {
		v.add(path, "has %d elements; Slack allows 1 to 25", len(els))
	}
	for k, el := range els {
		v.element(fmt.Sprintf("%s elements[%d]", path, k), el)
	}
}

// element checks one interactive or image element against Slack's rules.
func (v *validator) element(path string, el slack.BlockElement) {
	plain := func(what string, t *slack.TextBlockObject, max int, required bool) {
		switch {
		case t == nil && required:
			v.add(path, "%s is missing", what)
		case t == nil:
		case t.Type != slack.PlainTextType:
			v.add(path, "%s type is %q; Slack needs plain_text", what, t.Type)
		case strings.TrimSpace(t.Text) == "":
			v.add(path, "%s is empty", what)
		case Len(t.Text) > max:
			v.add(path, "%s is %d characters; Slack allows %d", what, Len(t.Text), max)
		}
	}
	url := func(what, u string, required bool) {
		switch {
		case u == "" && required:
			v.add(path, "%s is missing", what)
		case u == "":
		case !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://"):
			v.add(path, "%s %q is not an http(s) URL", what, u)
		case Len(u) > urlLimit:
			v.add(path, "%s is %d characters; Slack allows %d", what, Len(u), urlLimit)
		}
	}
	options := func(opts []*slack.OptionBlockObject, lo, hi int, withURL bool) {
		if len(opts) < lo || len(opts) > hi {
			v.add(path, "has %d options; Slack allows %d to %d", len(opts), lo, hi)
		}
		for k, o := range opts {
			if o == nil {
				v.add(path, "options[%d] is null", k)
				continue
			}
			plain(fmt.Sprintf("options[%d] text", k), o.Text, optionTextLimit, true)
			plain(fmt.Sprintf("options[%d] description", k), o.Description, optionTextLimit, false)
			if o.Value == "" || Len(o.Value) > optionValueLimit {
				v.add(path, "options[%d] value is %d characters; Slack needs 1 to %d", k, Len(o.Value), optionValueLimit)
			}
			if o.URL != "" && !withURL {
				v.add(path, "options[%d] has a url; only overflow menus allow one", k)
			}
			url(fmt.Sprintf("options[%d] url", k), o.URL, false)
		}
	}
	// A static select takes options or option groups, not both.
	staticOptions := func(opts []*slack.OptionBlockObject, groups []*slack.OptionGroupBlockObject) {
		if len(groups) == 0 {
			options(opts, 1, 100, false)
			return
		}
		if len(opts) > 0 {
			v.add(path, "has both options and option_groups; Slack takes one of them")
		}
		if len(groups) > 100 {
			v.add(path, "has %d option_groups; Slack allows 1 to 100", len(groups))
		}
		for k, g := range groups {
			if g == nil {
				v.add(path, "option_groups[%d] is null", k)
				continue
			}
			plain(fmt.Sprintf("option_groups[%d] label", k), g.Label, optionTextLimit, true)
			options(g.Options, 1, 100, false)
		}
	}
	actionID := func(id string) {
		if Len(id) > actionIDLimit {
			v.add(path, "action_id is %d characters; Slack allows %d", Len(id), actionIDLimit)
		}
	}
	switch e := el.(type) {
	case *slack.ButtonBlockElement:
		plain("text", e.Text, buttonTextLimit, true)
		url("url", e.URL, false)
		actionID(e.ActionID)
		if Len(e.Value) > valueLimit {
			v.add(path, "value is %d characters; Slack allows %d", Len(e.Value), valueLimit)
		}
	case *slack.OverflowBlockElement:
		options(e.Options, 2, 5, true)
		actionID(e.ActionID)
	case *slack.SelectBlockElement:
		plain("placeholder", e.Placeholder, placeholderLimit, false)
		actionID(e.ActionID)
		if e.Type == "static_select" {
			staticOptions(e.Options, e.OptionGroups)
		}
	case *slack.MultiSelectBlockElement:
		plain("placeholder", e.Placeholder, placeholderLimit, false)
		actionID(e.ActionID)
		if e.Type == "multi_static_select" {
			staticOptions(e.Options, e.OptionGroups)
		}
	case *slack.DatePickerBlockElement:
		plain("placeholder", e.Placeholder, placeholderLimit, false)
		actionID(e.ActionID)
		if _, err := time.Parse("2006-01-02", e.InitialDate); e.InitialDate != "" && err != nil {
			v.add(path, "initial_date %q is not a date in the form YYYY-MM-DD", e.InitialDate)
		}
	case *slack.TimePickerBlockElement:
		plain("placeholder", e.Placeholder, placeholderLimit, false)
		actionID(e.ActionID)
		if _, err := time.Parse("15:04", e.InitialTime); e.InitialTime != "" && err != nil {
			v.add(path, "initial_time %q is not a time in the form HH:mm", e.InitialTime)
		}
	case *slack.CheckboxGroupsBlockElement:
		options(e.Options, 1, 10, false)
		actionID(e.ActionID)
	case *slack.RadioButtonsBlockElement:
		options(e.Options, 1, 10, false)
		actionID(e.ActionID)
	case *slack.ImageBlockElement:
		if e.SlackFile == nil {
			u := ""
			if e.ImageURL != nil {
				u = *e.ImageURL
			}
			url("image_url", u, true)
		}
		if strings.TrimSpace(e.AltText) == "" || Len(e.AltText) > altTextLimit {
			v.add(path, "alt_text is %d characters; Slack needs 1 to %d", Len(e.AltText), altTextLimit)
		}
	default:
		v.add(path, "element %T is not one a message can hold", el)
	}
}

func (v *validator) image(path string, b *slack.ImageBlock) {
	if b.SlackFile == nil {
		el := &slack.ImageBlockElement{ImageURL: &b.ImageURL, AltText: b.AltText}
		v.element(path, el)
	} else if strings.TrimSpace(b.AltText) == "" || Len(b.AltText) > altTextLimit {
		v.add(path, "alt_text is %d characters; Slack needs 1 to %d", Len(b.AltText), altTextLimit)
	}
	if b.Title != nil {
		v.textObject(path, "title", b.Title, altTextLimit, true)
	}
}

func (v *validator) video(path string, b *slack.VideoBlock) {
	// The video and its title link must be https; the thumbnail http(s).
	switch u := b.VideoURL; {
	case !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://"):
		v.add(path, "video_url %q is not an http(s) URL; Slack needs one", u)
	case !strings.HasPrefix(u, "https://"):
		v.add(path, "video_url %q is not https; Slack needs an https video", u)
	}
	if u := b.ThumbnailURL; !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		v.add(path, "thumbnail_url %q is not an http(s) URL; Slack needs one", u)
	}
	if u := b.TitleURL; u != "" && !strings.HasPrefix(u, "https://") {
		v.add(path, "title_url %q is not https; Slack needs an https title link", u)
	}
	if strings.TrimSpace(b.AltText) == "" {
		v.add(path, "alt_text is empty; Slack needs it")
	}
	if b.Title == nil {
		v.add(path, "has no title; Slack needs plain_text under 200 characters")
	} else {
		v.textObject(path, "title", b.Title, videoTextLimit, true)
	}
	if b.Description != nil {
		v.textObject(path, "description", b.Description, videoTextLimit, true)
	}
	if Len(b.AuthorName) > videoAuthorLimit {
		v.add(path, "author_name is %d characters; Slack allows %d", Len(b.AuthorName), videoAuthorLimit)
	}
}

func (v *validator) richText(path string, b *slack.RichTextBlock) {
	if len(b.Elements) == 0 {
		v.add(path, "has no elements; Slack needs at least one")
	}
	section := func(what string, els []slack.RichTextSectionElement) {
		if len(els) == 0 {
			v.add(path, "%s is empty; Slack needs at least one element", what)
		}
		for _, e := range els {
			if t, ok := e.(*slack.RichTextSectionTextElement); ok && t.Text == "" {
				v.add(path, "%s has an empty text element", what)
			}
		}
	}
	for k, e := range b.Elements {
		what := fmt.Sprintf("elements[%d]", k)
		switch e := e.(type) {
		case *slack.RichTextSection:
			section(what, e.Elements)
		case *slack.RichTextQuote:
			section(what, e.Elements)
		case *slack.RichTextPreformatted:
			section(what, e.Elements)
		case *slack.RichTextList:
			if len(e.Elements) == 0 {
				v.add(path, "%s is an empty list", what)
			}
			if e.Style != slack.RTEListBullet && e.Style != slack.RTEListOrdered {
				v.add(path, "%s list style is %q; Slack takes bullet or ordered", what, e.Style)
			}
			for j, item := range e.Elements {
				if s, ok := item.(*slack.RichTextSection); !ok {
					v.add(path, "%s item %d is %T; Slack takes rich_text_section items", what, j, item)
				} else {
					section(fmt.Sprintf("%s item %d", what, j), s.Elements)
				}
			}
		default:
			v.add(path, "%s is %T; Slack does not know it", what, e)
		}
	}
}

func (v *validator) markdown(path, text string) int {
	if strings.TrimSpace(text) == "" {
		v.add(path, "text is empty; Slack needs at least 1 character")
	}
	return Len(text)
}
