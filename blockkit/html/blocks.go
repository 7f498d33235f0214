package html

import (
	"encoding/json"
	"strconv"

	"github.com/slackbot/slackbot/blockkit"
)

// textObject is a Block Kit text object: plain_text or mrkdwn.
type textObject struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// slackFile is an image hosted by Slack, named by url or id.
type slackFile struct {
	URL string `json:"url"`
	ID  string `json:"id"`
}

// element is any block element or context element. Text is raw because it
// is a string in context text objects and an object in buttons.
type element struct {
	Type      string          `json:"type"`
	Text      json.RawMessage `json:"text"`
	ActionID  string          `json:"action_id"`
	Value     string          `json:"value"`
	URL       string          `json:"url"`
	Style     string          `json:"style"`
	ImageURL  string          `json:"image_url"`
	AltText   string          `json:"alt_text"`
	SlackFile *slackFile      `json:"slack_file"`
}

// block holds the fields of every block type the renderer draws; each type
// reads the ones it has.
type block struct {
	Type      string          `json:"type"`
	Text      json.RawMessage `json:"text"`
	Fields    []textObject    `json:"fields"`
	Accessory *element        `json:"accessory"`
	Elements  json.RawMessage `json:"elements"`
	ImageURL  string          `json:"image_url"`
	AltText   string          `json:"alt_text"`
	Title     *textObject     `json:"title"`
	SlackFile *slackFile      `json:"slack_file"`
	Rows      [][]tableCell   `json:"rows"`
	Caption   string          `json:"caption"`
	Columns   []struct {
		Align     string `json:"align"`
		IsWrapped bool   `json:"is_wrapped"`
	} `json:"column_settings"`
}

// block draws one block; a block that does not decode becomes an error box
// holding its JSON, and the rest of the message is still drawn.
func (r *renderer) block(raw json.RawMessage) {
	var b block
	if err := json.Unmarshal(raw, &b); err != nil {
		r.errorBox("invalid block: "+err.Error(), string(raw))
		return
	}
	var err error
	switch b.Type {
	case "header":
		err = r.header(b)
	case "section":
		err = r.section(b)
	case "context":
		err = r.context(b)
	case "divider":
		r.b.WriteString(`<hr class="bk-divider">`)
	case "image":
		r.b.WriteString(`<figure class="bk-image">`)
		if b.Title != nil && b.Title.Text != "" {
			r.b.WriteString(`<figcaption class="bk-image-title">`)
			r.esc(b.Title.Text)
			r.b.WriteString(`</figcaption>`)
		}
		r.image("bk-image-img", b.ImageURL, b.SlackFile, b.AltText, b.Title)
		r.b.WriteString(`</figure>`)
	case "actions":
		err = r.actions(b)
	case "context_actions":
		err = r.contextActions(b)
	case "table":
		r.table(b, false)
	case "data_table":
		r.table(b, true)
	case "rich_text":
		err = r.richText(b.Elements)
	case "markdown":
		var md string
		if err = json.Unmarshal(b.Text, &md); err == nil {
			// The bot's own Markdown conversion shows what standard
			// Markdown looks like in Slack's dialect.
			r.b.WriteString(`<div class="bk-markdown bk-mrkdwn">`)
			r.mrkdwn(blockkit.Mrkdwn(md))
			r.b.WriteString(`</div>`)
		}
	default:
		r.unsupported("block", b.Type)
	}
	if err != nil {
		r.errorBox("invalid "+b.Type+" block: "+err.Error(), string(raw))
	}
}

func (r *renderer) header(b block) error {
	var t textObject
	if err := json.Unmarshal(b.Text, &t); err != nil {
		return err
	}
	r.b.WriteString(`<div class="bk-header">`)
	r.escLines(t.Text)
	r.b.WriteString(`</div>`)
	return nil
}

func (r *renderer) section(b block) error {
	var t *textObject
	if len(b.Text) > 0 && string(b.Text) != "null" {
		if err := json.Unmarshal(b.Text, &t); err != nil {
			return err
		}
	}
	r.b.WriteString(`<div class="bk-section"><div class="bk-section-body">`)
	if t != nil {
		r.text(*t, "div")
	}
	if len(b.Fields) > 0 {
		r.b.WriteString(`<div class="bk-fields">`)
		for _, f := range b.Fields {
			r.b.WriteString(`<div class="bk-field">`)
			r.text(f, "div")
			r.b.WriteString(`</div>`)
		}
		r.b.WriteString(`</div>`)
	}
	r.b.WriteString(`</div>`)
	if a := b.Accessory; a != nil {
		r.b.WriteString(`<div class="bk-accessory">`)
		switch a.Type {
		case "image":
			r.image("bk-accessory-img", a.ImageURL, a.SlackFile, a.AltText, nil)
		default:
			r.element(*a)
		}
		r.b.WriteString(`</div>`)
	}
	r.b.WriteString(`</div>`)
	return nil
}

// text draws a text object: mrkdwn as Slack formats it, plain_text as is.
func (r *renderer) text(t textObject, tag string) {
	if t.Type == "mrkdwn" {
		r.b.WriteString("<" + tag + ` class="bk-mrkdwn">`)
		r.mrkdwn(t.Text)
	} else {
		r.b.WriteString("<" + tag + ` class="bk-plain">`)
		r.escLines(t.Text)
	}
	r.b.WriteString("</" + tag + ">")
}

func (r *renderer) context(b block) error {
	var els []element
	if err := json.Unmarshal(b.Elements, &els); err != nil {
		return err
	}
	r.b.WriteString(`<div class="bk-context">`)
	for _, e := range els {
		switch e.Type {
		case "mrkdwn", "plain_text":
			var s string
			if err := json.Unmarshal(e.Text, &s); err != nil {
				return err
			}
			r.text(textObject{Type: e.Type, Text: s}, "div")
		case "image":
			r.image("bk-context-img", e.ImageURL, e.SlackFile, e.AltText, nil)
		default:
			r.unsupported("element", e.Type)
		}
	}
	r.b.WriteString(`</div>`)
	return nil
}

// image draws an <img> when its address is safe to load, else a labelled
// placeholder, so an answer cannot load javascript: or data: addresses.
func (r *renderer) image(class, src string, file *slackFile, alt string, title *textObject) {
	if src == "" && file != nil {
		src = file.URL
	}
	if !safeURL(src, imageSchemes) {
		r.b.WriteString(`<span class="bk-image-missing">[image`)
		if alt != "" {
			r.b.WriteString(": ")
			r.esc(alt)
		}
		r.b.WriteString(`]</span>`)
		return
	}
	r.b.WriteString(`<img class="` + class + `"`)
	r.attr("src", src)
	r.attr("alt", alt)
	if title != nil && title.Text != "" {
		r.attr("title", title.Text)
	}
	r.b.WriteString(` loading="lazy">`)
}

func (r *renderer) actions(b block) error {
	var els []element
	if err := json.Unmarshal(b.Elements, &els); err != nil {
		return err
	}
	r.b.WriteString(`<div class="bk-actions">`)
	for _, e := range els {
		r.element(e)
	}
	r.b.WriteString(`</div>`)
	return nil
}

// contextButton is a button of a feedback_buttons element.
type contextButton struct {
	Text               textObject `json:"text"`
	Value              string     `json:"value"`
	AccessibilityLabel string     `json:"accessibility_label"`
}

// contextAction is an element of a context_actions block.
type contextAction struct {
	Type               string         `json:"type"`
	ActionID           string         `json:"action_id"`
	Positive           *contextButton `json:"positive_button"`
	Negative           *contextButton `json:"negative_button"`
	Icon               string         `json:"icon"`
	Text               textObject     `json:"text"`
	Value              string         `json:"value"`
	AccessibilityLabel string         `json:"accessibility_label"`
}

// contextActions draws a context_actions block as Slack does: a row of
// small icon buttons under the message, feedback buttons as a thumb up
// and a thumb down. The buttons' texts become their tooltips and labels.
func (r *renderer) contextActions(b block) error {
	var els []contextAction
	if err := json.Unmarshal(b.Elements, &els); err != nil {
		return err
	}
	r.b.WriteString(`<div class="bk-context-actions">`)
	for _, e := range els {
		switch e.Type {
		case "feedback_buttons":
			for _, side := range []struct {
				name, icon string
				b          *contextButton
			}{{"positive", thumbUpIcon, e.Positive}, {"negative", thumbDownIcon, e.Negative}} {
				if side.b == nil {
					continue
				}
				r.iconButton("bk-feedback bk-feedback-"+side.name, side.icon, e.ActionID, side.b.Value,
					side.b.Text.Text, side.b.AccessibilityLabel)
			}
		case "icon_button":
			// Slack has one icon, trash; another name draws as a dot.
			icon := dotIcon
			if e.Icon == "trash" {
				icon = trashIcon
			}
			r.iconButton("bk-icon-button", icon, e.ActionID, e.Value, e.Text.Text, e.AccessibilityLabel)
		default:
			r.unsupported("element", e.Type)
		}
	}
	r.b.WriteString(`</div>`)
	return nil
}

// Icons of the context_actions buttons, drawn in the text's colour so they
// need no emoji font: outlines on a 24×24 grid.
const (
	iconOpen      = `<svg class="bk-icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round" stroke-linecap="round">`
	thumbPath     = `<rect x="2.5" y="10" width="4" height="11" rx="1"></rect><path d="M6.5 10.5 11 3c1.7 0 2.8 1.3 2.4 3L12.6 10H19c1.4 0 2.4 1.3 2 2.7l-1.9 6.6c-.3 1-1.1 1.7-2.1 1.7H6.5"></path>`
	thumbUpIcon   = iconOpen + thumbPath + `</svg>`
	thumbDownIcon = iconOpen + `<g transform="rotate(180 12 12)">` + thumbPath + `</g></svg>`
	trashIcon     = iconOpen + `<path d="M4 7h16M9.5 7V4h5v3M6 7l1 13h10l1-13M10 11v5M14 11v5"></path></svg>`
	dotIcon       = iconOpen + `<circle cx="12" cy="12" r="3"></circle></svg>`
)

// iconButton draws one small button showing icon, with text as its
// tooltip and label (label, when given, for screen readers).
func (r *renderer) iconButton(class, icon, actionID, value, text, label string) {
	r.b.WriteString(`<button class="` + class + `" type="button"`)
	r.attr("data-action-id", actionID)
	r.attr("data-value", value)
	r.attr("title", text)
	if label == "" {
		label = text
	}
	r.attr("aria-label", label)
	r.b.WriteString(`>` + icon + `</button>`)
}

// element draws an interactive element. A button carries data-action-id
// and data-value so that a page can send its clicks on; one with a safe
// url is also a link.
func (r *renderer) element(e element) {
	if e.Type != "button" {
		r.unsupported("element", e.Type)
		return
	}
	var label textObject
	_ = json.Unmarshal(e.Text, &label) // a missing label draws an empty button
	class := "bk-button"
	switch e.Style {
	case "primary", "danger":
		class += " bk-button-" + e.Style
	}
	tag := "button"
	if safeURL(e.URL, linkSchemes) {
		tag = "a"
	}
	r.b.WriteString("<" + tag + ` class="` + class + `"`)
	if tag == "a" {
		r.attr("href", e.URL)
		r.b.WriteString(` target="_blank" rel="noopener noreferrer"`)
	} else {
		r.b.WriteString(` type="button"`)
	}
	r.attr("data-action-id", e.ActionID)
	r.attr("data-value", e.Value)
	r.b.WriteString(">")
	r.esc(label.Text)
	r.b.WriteString("</" + tag + ">")
}

// tableCell is one cell of a table block: raw_text, raw_number or
// rich_text; a null cell decodes with an empty Type.
type tableCell struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Value    json.Number     `json:"value"`
	Elements json.RawMessage `json:"elements"`
}

// table draws a table or data_table block. A data_table's first row is its
// header; a table block has no such flag, so every row of it is data.
func (r *renderer) table(b block, firstRowHeader bool) {
	r.b.WriteString(`<div class="bk-table-wrap"><table class="bk-table">`)
	if b.Caption != "" {
		r.b.WriteString(`<caption>`)
		r.esc(b.Caption)
		r.b.WriteString(`</caption>`)
	}
	for i, row := range b.Rows {
		head := firstRowHeader && i == 0
		switch {
		case head:
			r.b.WriteString(`<thead>`)
		case i == 0 || firstRowHeader && i == 1:
			r.b.WriteString(`<tbody>`)
		}
		r.b.WriteString(`<tr>`)
		for j, c := range row {
			tag := "td"
			if head {
				tag = "th"
			}
			class := "bk-cell"
			if j < len(b.Columns) {
				switch a := b.Columns[j].Align; a {
				case "center", "right":
					class += " bk-align-" + a
				}
				if b.Columns[j].IsWrapped {
					class += " bk-wrap"
				}
			}
			r.b.WriteString("<" + tag + ` class="` + class + `">`)
			r.cell(c)
			r.b.WriteString("</" + tag + ">")
		}
		r.b.WriteString(`</tr>`)
		if head {
			r.b.WriteString(`</thead>`)
		}
	}
	if len(b.Rows) > 0 && !(firstRowHeader && len(b.Rows) == 1) {
		r.b.WriteString(`</tbody>`)
	}
	r.b.WriteString(`</table></div>`)
}

func (r *renderer) cell(c tableCell) {
	switch c.Type {
	case "":
	case "raw_text":
		r.escLines(c.Text)
	case "raw_number":
		if c.Text != "" {
			r.esc(c.Text)
		} else if f, err := strconv.ParseFloat(string(c.Value), 64); err == nil {
			r.esc(strconv.FormatFloat(f, 'f', -1, 64))
		}
	case "rich_text":
		if err := r.richText(c.Elements); err != nil {
			r.errorBox("invalid rich_text cell: "+err.Error(), string(c.Elements))
		}
	default:
		r.unsupported("cell", c.Type)
	}
}
