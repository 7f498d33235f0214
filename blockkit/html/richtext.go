package html

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// richElement is any element of a rich_text block: a container (section,
// list, preformatted, quote) or an inline element inside one. Style is raw
// because it is a string on lists and an object on inline elements.
type richElement struct {
	Type        string          `json:"type"`
	Elements    []richElement   `json:"elements"`
	Style       json.RawMessage `json:"style"`
	Indent      int             `json:"indent"`
	Offset      int             `json:"offset"`
	Text        string          `json:"text"`
	URL         string          `json:"url"`
	UserID      string          `json:"user_id"`
	ChannelID   string          `json:"channel_id"`
	UsergroupID string          `json:"usergroup_id"`
	TeamID      string          `json:"team_id"`
	Name        string          `json:"name"`
	Unicode     string          `json:"unicode"`
	Range       string          `json:"range"`
	Value       string          `json:"value"`
	Timestamp   json.Number     `json:"timestamp"`
	Fallback    string          `json:"fallback"`
}

// textStyle is the style of an inline rich text element.
type textStyle struct {
	Bold   bool `json:"bold"`
	Italic bool `json:"italic"`
	Strike bool `json:"strike"`
	Code   bool `json:"code"`
}

// maxIndent is the deepest list indent with a style of its own.
const maxIndent = 8

// richText draws the elements of a rich_text block or cell.
func (r *renderer) richText(raw json.RawMessage) error {
	var els []richElement
	if err := json.Unmarshal(raw, &els); err != nil {
		return err
	}
	r.b.WriteString(`<div class="bk-rich">`)
	for _, e := range els {
		r.richBlock(e)
	}
	r.b.WriteString(`</div>`)
	return nil
}

func (r *renderer) richBlock(e richElement) {
	switch e.Type {
	case "rich_text_section":
		r.b.WriteString(`<div class="bk-rt-section">`)
		r.richInline(e.Elements, false)
		r.b.WriteString(`</div>`)
	case "rich_text_list":
		var style string
		_ = json.Unmarshal(e.Style, &style) // anything but "ordered" is bullets
		indent := min(max(e.Indent, 0), maxIndent)
		class := ` class="bk-rt-list bk-indent-` + strconv.Itoa(indent) + `"`
		tag := "ul"
		if style == "ordered" {
			tag = "ol"
			r.b.WriteString("<ol" + class)
			if e.Offset > 0 {
				r.b.WriteString(` start="` + strconv.Itoa(e.Offset+1) + `"`)
			}
			r.b.WriteString(">")
		} else {
			r.b.WriteString("<ul" + class + ">")
		}
		for _, item := range e.Elements {
			r.b.WriteString("<li>")
			if item.Type == "rich_text_section" {
				r.richInline(item.Elements, false)
			} else {
				r.richBlock(item)
			}
			r.b.WriteString("</li>")
		}
		r.b.WriteString("</" + tag + ">")
	case "rich_text_preformatted":
		r.b.WriteString(`<pre class="bk-pre">`)
		r.richInline(e.Elements, true)
		r.b.WriteString(`</pre>`)
	case "rich_text_quote":
		r.b.WriteString(`<blockquote class="bk-quote">`)
		r.richInline(e.Elements, false)
		r.b.WriteString(`</blockquote>`)
	default:
		r.unsupported("rich text element", e.Type)
	}
}

// richInline draws inline elements; in preformatted text, styles are
// dropped and newlines stay newlines.
func (r *renderer) richInline(els []richElement, pre bool) {
	for _, e := range els {
		var st textStyle
		if !pre && len(e.Style) > 0 {
			_ = json.Unmarshal(e.Style, &st) // an unreadable style is no style
		}
		closeTags := r.openStyle(st)
		switch e.Type {
		case "text":
			if pre {
				r.esc(e.Text)
			} else {
				r.escLines(e.Text)
			}
		case "link":
			label := e.Text
			if label == "" {
				label = e.URL
			}
			r.link(e.URL, func() { r.escLines(label) }, false)
		case "user":
			r.mention("user", e.UserID, "")
		case "channel":
			r.mention("channel", e.ChannelID, "")
		case "usergroup":
			r.mention("usergroup", e.UsergroupID, "")
		case "team":
			r.mention("team", e.TeamID, "")
		case "broadcast":
			r.mention("broadcast", e.Range, "")
		case "emoji":
			r.emoji(e.Name, e.Unicode)
		case "date":
			r.date(e.Timestamp, e.Fallback)
		case "color":
			r.b.WriteString(`<span class="bk-color">`)
			r.esc(e.Value)
			r.b.WriteString(`</span>`)
		default:
			r.b.WriteString(`<span class="bk-unsupported bk-inline">unsupported element: `)
			r.esc(e.Type)
			r.b.WriteString(`</span>`)
		}
		r.b.WriteString(closeTags)
	}
}

// openStyle writes the tags of st and returns the matching closing tags.
func (r *renderer) openStyle(st textStyle) string {
	var closing []string
	for _, s := range []struct {
		on       bool
		open, cl string
	}{
		{st.Bold, "<b>", "</b>"},
		{st.Italic, "<i>", "</i>"},
		{st.Strike, "<s>", "</s>"},
		{st.Code, `<code class="bk-code">`, "</code>"},
	} {
		if s.on {
			r.b.WriteString(s.open)
			closing = append([]string{s.cl}, closing...)
		}
	}
	return strings.Join(closing, "")
}

// mention draws a user, channel, user group, team or broadcast mention.
// label, when the message gave one, wins over the resolvers.
func (r *renderer) mention(kind, id, label string) {
	name, prefix := label, "@"
	switch kind {
	case "user":
		if name == "" && r.opts.UserName != nil {
			name = r.opts.UserName(id)
		}
	case "channel":
		prefix = "#"
		if name == "" && r.opts.ChannelName != nil {
			name = r.opts.ChannelName(id)
		}
	}
	if name == "" {
		name = id
	}
	if !strings.HasPrefix(name, prefix) {
		name = prefix + name
	}
	r.b.WriteString(`<span class="bk-mention bk-mention-` + kind + `"`)
	if kind != "broadcast" {
		r.attr("data-id", id)
	}
	r.b.WriteString(">")
	r.esc(name)
	r.b.WriteString(`</span>`)
}

// emoji draws an emoji from its code points ("1f44d", "1f1fa-1f1f8"), or
// as its :shortcode: when it has none.
func (r *renderer) emoji(name, unicode string) {
	var chars strings.Builder
	for part := range strings.SplitSeq(unicode, "-") {
		n, err := strconv.ParseUint(part, 16, 32)
		if err != nil || !utf8.ValidRune(rune(n)) {
			chars.Reset()
			break
		}
		chars.WriteRune(rune(n))
	}
	r.b.WriteString(`<span class="bk-emoji"`)
	r.attr("title", ":"+name+":")
	r.b.WriteString(">")
	if chars.Len() > 0 {
		r.esc(chars.String())
	} else {
		r.esc(":" + name + ":")
	}
	r.b.WriteString(`</span>`)
}

// date draws a date element: its fallback text, else the time in UTC.
func (r *renderer) date(ts json.Number, fallback string) {
	r.b.WriteString(`<span class="bk-date">`)
	if fallback != "" {
		r.esc(fallback)
	} else if n, err := ts.Int64(); err == nil {
		r.esc(time.Unix(n, 0).UTC().Format("2006-01-02 15:04 UTC"))
	}
	r.b.WriteString(`</span>`)
}
