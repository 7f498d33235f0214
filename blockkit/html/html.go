// Package html draws Block Kit messages as HTML the way Slack shows them,
// for the playground and `slackbot render --html`.
//
// Every string taken from a message is escaped, and links, images and
// buttons keep only http, https (and, for links, mailto) addresses, so a
// model's answer cannot inject markup or script into the page. The markup
// uses the classes styled by CSS. Block types the renderer does not know
// are shown as a grey "unsupported block" box rather than dropped.
//
// A markdown block is converted with blockkit.Mrkdwn and drawn as mrkdwn,
// so it shows what the bot's own conversion makes of standard Markdown
// (headings bold, tables aligned code). A table block has no header flag,
// so all its rows are data rows; a data_table's first row is its header.
// Blocks keep their order, although Slack shows a table block last.
package html

import (
	"encoding/json"
	"html/template"
	"net/url"
	"strings"
)

// Options tune how a message is drawn. The zero value works: mentions show
// the raw user and channel ids.
type Options struct {
	// UserName returns the display name of a Slack user id, or "" when it
	// is not known; the mention then shows the id.
	UserName func(id string) string
	// ChannelName returns the name of a Slack channel id, or "" when it is
	// not known; the mention then shows the id.
	ChannelName func(id string) string
}

// Message renders one message's blocks (a JSON array of Block Kit blocks)
// with its notification text as the fallback when there are no blocks.
// Everything from the message is escaped: a <script> in an answer is text.
func Message(blocks json.RawMessage, text string) template.HTML {
	return Options{}.Message(blocks, text)
}

// Message renders a message as the package-level Message does, naming
// users and channels with o's resolvers.
func (o Options) Message(blocks json.RawMessage, text string) template.HTML {
	r := &renderer{opts: o}
	r.b.WriteString(`<div class="bk-message">`)
	r.message(blocks, text)
	r.b.WriteString(`</div>`)
	// Every piece written by the renderer is either fixed markup or escaped.
	return template.HTML(r.b.String())
}

// renderer accumulates the HTML of one message.
type renderer struct {
	b    strings.Builder
	opts Options
}

func (r *renderer) message(blocks json.RawMessage, text string) {
	trimmed := strings.TrimSpace(string(blocks))
	if trimmed == "" || trimmed == "null" || trimmed == "[]" {
		if text != "" {
			r.b.WriteString(`<div class="bk-section bk-text"><div class="bk-mrkdwn">`)
			r.mrkdwn(text)
			r.b.WriteString(`</div></div>`)
		}
		return
	}
	var list []json.RawMessage
	if err := json.Unmarshal(blocks, &list); err != nil {
		r.errorBox("invalid blocks JSON: "+err.Error(), string(blocks))
		return
	}
	for _, raw := range list {
		r.block(raw)
	}
}

// errorBox shows a problem and the raw text it concerns.
func (r *renderer) errorBox(msg, raw string) {
	r.b.WriteString(`<div class="bk-error"><div class="bk-error-title">`)
	r.esc(msg)
	r.b.WriteString(`</div><pre class="bk-error-raw">`)
	r.esc(raw)
	r.b.WriteString(`</pre></div>`)
}

// unsupported shows a visible placeholder for a block or element type the
// renderer does not draw.
func (r *renderer) unsupported(kind, typ string) {
	r.b.WriteString(`<div class="bk-unsupported">unsupported `)
	r.esc(kind)
	r.b.WriteString(`: `)
	if typ == "" {
		typ = "(no type)"
	}
	r.esc(typ)
	r.b.WriteString(`</div>`)
}

// esc writes s escaped for HTML text or a double-quoted attribute.
func (r *renderer) esc(s string) { r.b.WriteString(template.HTMLEscapeString(s)) }

// escLines writes s escaped, with each newline a <br>.
func (r *renderer) escLines(s string) {
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			r.b.WriteString("<br>")
		}
		r.esc(line)
	}
}

// attr writes ` name="value"` with value escaped.
func (r *renderer) attr(name, value string) {
	r.b.WriteString(" " + name + `="`)
	r.esc(value)
	r.b.WriteString(`"`)
}

// linkSchemes and imageSchemes are the address schemes a page may follow or
// load; anything else (javascript:, data:, vbscript:, relative paths) is
// refused.
var (
	linkSchemes  = []string{"http", "https", "mailto"}
	imageSchemes = []string{"http", "https"}
)

// safeURL reports whether raw is an absolute address with one of schemes.
// url.Parse lowercases the scheme and refuses control characters, which
// browsers would otherwise strip from "java\tscript:".
func safeURL(raw string, schemes []string) bool {
	if raw == "" || strings.TrimSpace(raw) != raw {
		return false
	}
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	for _, s := range schemes {
		if u.Scheme == s {
			return s == "mailto" || u.Host != ""
		}
	}
	return false
}
