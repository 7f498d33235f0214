package blockkit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit/internal/jsonish"
)

// Step 3 of Repair, continued: legacy attachments. Models still write the
// attachments Slack had before Block Kit; each becomes blocks in reading
// order: pretext, author, title, text, fields, image, actions, footer. The
// colour bar, which blocks cannot draw, becomes a coloured circle before
// the attachment's first line.

// attachmentKeys are the attachment fields read into blocks; the words of
// any other field follow as text.
var attachmentKeys = map[string]bool{
	"pretext": true, "author_name": true, "author_link": true, "title": true, "title_link": true,
	"text": true, "fields": true, "image_url": true, "thumb_url": true, "actions": true,
	"footer": true, "ts": true, "color": true, "fallback": true, "blocks": true,
}

// attachment turns one legacy attachment into blocks.
func (r *repairer) attachment(a *jsonish.Value, path string, depth int) []slack.Block {
	if a.Kind != jsonish.Object {
		r.note(path, "attachment_converted", "attachment that is not an object kept as text")
		return r.textSections(readable(a), path)
	}
	var out []slack.Block
	if a.Has("blocks") {
		r.note(path, "shape_coerced", "attachment blocks moved into the message")
		out = r.blocks(a.Get("blocks"), join(path, "blocks"), depth)
	}
	body := len(out) // where the attachment's own text starts, after its blocks
	if s := a.GetString("pretext"); strings.TrimSpace(s) != "" {
		out = append(out, r.textSections(s, join(path, "pretext"))...)
		body = len(out)
	}
	if name := strings.TrimSpace(a.GetString("author_name")); name != "" {
		link := slackLink(a.GetString("author_link"), name)
		if !strings.HasPrefix(link, "<") {
			link = r.mrkdwnText(name, join(path, "author_name"))
		}
		out = append(out, &slack.ContextBlock{Type: slack.MBTContext, ContextElements: slack.ContextElements{
			Elements: []slack.MixedElement{&slack.TextBlockObject{Type: slack.MarkdownType, Text: link}}}})
	}
	if title := collapseSpaces(a.GetString("title")); title != "" {
		line := slackLink(a.GetString("title_link"), title)
		if !strings.HasPrefix(line, "<") {
			line = literalMrkdwn(mrkdwnPlain(title), true)
		}
		out = append(out, r.sections(&slack.TextBlockObject{Type: slack.MarkdownType, Text: "*" + line + "*"}, "", join(path, "title"))...)
	}
	if s := a.GetString("text"); strings.TrimSpace(s) != "" {
		out = append(out, r.textSections(s, join(path, "text"))...)
	}
	out = append(out, r.attachmentFields(a.Get("fields"), join(path, "fields"))...)
	if u := a.GetString("thumb_url"); isWebURL(u) {
		r.thumbnail(out[body:], u, a.GetString("title"))
	}
	if u := a.GetString("image_url"); u != "" {
		img := &jsonish.Value{Kind: jsonish.Object}
		img.Set("image_url", jsonish.NewString(u))
		img.Set("alt_text", jsonish.NewString(firstNonBlank(a.GetString("title"), a.GetString("fallback"), "image")))
		out = append(out, r.image(img, join(path, "image_url"), "")...)
	}
	if acts := a.Get("actions"); acts != nil && acts.Kind == jsonish.Array {
		holder := &jsonish.Value{Kind: jsonish.Object}
		holder.Set("elements", acts)
		out = append(out, r.actions(holder, join(path, "actions"), "")...)
	}
	if footer := r.footer(a, path); footer != "" {
		out = append(out, &slack.ContextBlock{Type: slack.MBTContext, ContextElements: slack.ContextElements{
			Elements: []slack.MixedElement{&slack.TextBlockObject{Type: slack.MarkdownType, Text: footer}}}})
	}
	var rest []string
	for i, k := range a.Keys {
		if !attachmentKeys[k] && !nonProseKeys[k] {
			if t := readable(a.Vals[i]); strings.TrimSpace(t) != "" {
				rest = append(rest, t)
			}
		}
	}
	if len(rest) > 0 {
		out = append(out, r.textSections(strings.Join(rest, "\n"), path)...)
	}
	if len(out) == body && body == 0 {
		if fb := a.GetString("fallback"); strings.TrimSpace(fb) != "" {
			out = r.textSections(fb, join(path, "fallback"))
		}
	}
	if mark := colorMark(a.GetString("color")); mark != "" {
		markFirstLine(out[min(body, len(out)):], mark)
	}
	if len(out) > 0 {
		r.note(path, "attachment_converted", "legacy attachment turned into blocks")
	}
	return out
}

// attachmentFields turns an attachment's fields ({"title", "value"}) into
// section fields, the title bold above the value.
func (r *repairer) attachmentFields(fv *jsonish.Value, path string) []slack.Block {
	var fields []*slack.TextBlockObject
	var moved []slack.Block
	for i, f := range fv.Items() {
		fp := index(path, i)
		title := collapseSpaces(f.GetString("title"))
		value := strings.TrimSpace(f.Get("value").Text())
		if f.Kind != jsonish.Object {
			value = strings.TrimSpace(readable(f))
		}
		var parts []string
		if title != "" {
			parts = append(parts, "*"+literalMrkdwn(mrkdwnPlain(title), true)+"*")
		}
		if value != "" {
			parts = append(parts, r.mrkdwnText(value, join(fp, "value")))
		}
		if len(parts) == 0 {
			continue
		}
		t := &slack.TextBlockObject{Type: slack.MarkdownType, Text: strings.Join(parts, "\n")}
		if Len(t.Text) > FieldTextMax {
			r.note(fp, "field_moved", fmt.Sprintf("field over %d characters moved into its own section", FieldTextMax))
			moved = append(moved, r.sections(t, "", fp)...)
			continue
		}
		fields = append(fields, t)
	}
	var out []slack.Block
	for i := 0; i < len(fields); i += MaxFields {
		out = append(out, &slack.SectionBlock{Type: slack.MBTSection, Fields: fields[i:min(i+MaxFields, len(fields))]})
	}
	return append(out, moved...)
}

// thumbnail puts an attachment's thumbnail beside its first section that
// has text and no accessory.
func (r *repairer) thumbnail(blocks []slack.Block, url, title string) {
	for _, b := range blocks {
		if s, ok := b.(*slack.SectionBlock); ok && s.Text != nil && s.Accessory == nil {
			alt := firstNonBlank(collapseSpaces(title), "thumbnail")
			s.Accessory = slack.NewAccessory(&slack.ImageBlockElement{Type: slack.METImage, ImageURL: &url, AltText: alt})
			return
		}
	}
}

// footer is an attachment's footer line: its footer text and its time.
func (r *repairer) footer(a *jsonish.Value, path string) string {
	var parts []string
	if f := strings.TrimSpace(a.GetString("footer")); f != "" {
		parts = append(parts, r.mrkdwnText(f, join(path, "footer")))
	}
	if ts, err := strconv.ParseFloat(strings.TrimSpace(a.Get("ts").Text()), 64); err == nil && ts > 0 && ts < math.MaxInt32 {
		sec := int64(ts)
		parts = append(parts, fmt.Sprintf("<!date^%d^{date_short_pretty} {time}|%s>", sec, time.Unix(sec, 0).UTC().Format("2006-01-02 15:04 UTC")))
	}
	return strings.Join(parts, " | ")
}

// markFirstLine puts mark before the text of the first block that has one.
func markFirstLine(blocks []slack.Block, mark string) {
	for _, b := range blocks {
		switch b := b.(type) {
		case *slack.SectionBlock:
			if b.Text != nil && b.Text.Type == slack.MarkdownType {
				b.Text.Text = mark + " " + b.Text.Text
				return
			}
			if len(b.Fields) > 0 && b.Fields[0].Type == slack.MarkdownType {
				b.Fields[0].Text = mark + " " + b.Fields[0].Text
				return
			}
		case *slack.ContextBlock:
			if t, ok := b.ContextElements.Elements[0].(*slack.TextBlockObject); ok && t.Type == slack.MarkdownType {
				t.Text = mark + " " + t.Text
				return
			}
		}
	}
}

// colorMark is the coloured circle emoji nearest to an attachment colour:
// Slack's good, warning and danger, or a hex colour by its hue.
func colorMark(color string) string {
	c := strings.ToLower(strings.TrimSpace(color))
	switch c {
	case "":
		return ""
	case "good":
		return ":large_green_circle:"
	case "warning":
		return ":large_yellow_circle:"
	case "danger":
		return ":red_circle:"
	}
	c = strings.TrimPrefix(c, "#")
	if len(c) == 3 {
		c = string([]byte{c[0], c[0], c[1], c[1], c[2], c[2]})
	}
	v, err := strconv.ParseUint(c, 16, 32)
	if len(c) != 6 || err != nil {
		return ""
	}
	red, green, blue := float64(v>>16&0xff)/255, float64(v>>8&0xff)/255, float64(v&0xff)/255
	hi, lo := max(red, green, blue), min(red, green, blue)
	switch {
	case hi-lo < 0.15 && hi < 0.5:
		return ":black_circle:"
	case hi-lo < 0.15:
		return ":white_circle:"
	}
	var hue float64
	switch hi {
	case red:
		hue = math.Mod((green-blue)/(hi-lo), 6)
	case green:
		hue = (blue-red)/(hi-lo) + 2
	default:
		hue = (red-green)/(hi-lo) + 4
	}
	hue = math.Mod(hue*60+360, 360)
	switch {
	case hue < 15 || hue >= 330:
		return ":red_circle:"
	case hue < 40:
		return ":large_orange_circle:"
	case hue < 70:
		return ":large_yellow_circle:"
	case hue < 170:
		return ":large_green_circle:"
	case hue < 260:
		return ":large_blue_circle:"
	}
	return ":large_purple_circle:"
}

// firstNonBlank returns the first of s that is not blank, trimmed.
func firstNonBlank(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return strings.TrimSpace(x)
		}
	}
	return ""
}
