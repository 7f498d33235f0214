package blockkit

import (
	"strings"

	"github.com/slackbot/slackbot/blockkit/internal/jsonish"
)

// The words of any JSON value, which is what a block or element that
// cannot be kept is turned into.

// nonProseKeys never hold words a person should read.
var nonProseKeys = map[string]bool{
	"type": true, "block_id": true, "action_id": true, "style": true, "emoji": true,
	"verbatim": true, "value": true, "confirm": true, "dispatch_action": true,
	"focus_on_load": true, "accessibility_label": true, "level": true, "border": true,
	"indent": true, "offset": true, "format": true, "unicode": true, "skin_tone": true,
	"is_wrapped": true, "align": true, "column_settings": true, "private_metadata": true,
	"callback_id": true, "fallback": true, "color": true, "ts": true, "id": true,
	"external_id": true, "source": true, "expand": true, "thumbnail_url": true,
	"image_width": true, "image_height": true, "image_bytes": true, "footer_icon": true,
	"author_icon": true, "thumb_url": true, "initial_option": true, "initial_options": true,
	"initial_date": true, "initial_time": true, "initial_value": true, "max_selected_items": true,
	"min_query_length": true, "response_url_enabled": true, "team_id": true, "mrkdwn_in": true,
	"icon": true, "icon_emoji": true, "icon_url": true, "provider_icon_url": true, "short": true,
	"timezone": true, "filter": true, "default_to_current_conversation": true,
}

// urlKeys hold the target of a link; readable shows them as one.
var urlKeys = []string{"url", "title_url", "title_link", "video_url", "image_url", "author_link"}

// readable returns the words of any JSON value as mrkdwn-ish text: strings
// in order, links as <url|label>, rich-text mentions as tokens. It is what a
// block or element Slack would refuse is turned into, so nothing the model
// wrote for the reader is lost.
func readable(v *jsonish.Value) string {
	if v == nil {
		return ""
	}
	switch v.Kind {
	case jsonish.String, jsonish.Number, jsonish.Bool:
		return v.Text()
	case jsonish.Array:
		parts := make([]string, 0, len(v.Vals))
		for _, item := range v.Vals {
			if t := readable(item); strings.TrimSpace(t) != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	case jsonish.Object:
		return readableObject(v)
	}
	return ""
}

func readableObject(v *jsonish.Value) string {
	switch v.GetString("type") {
	case "user":
		if id := v.GetString("user_id"); id != "" {
			return "<@" + id + ">"
		}
	case "usergroup":
		if id := v.GetString("usergroup_id"); id != "" {
			return "<!subteam^" + id + ">"
		}
	case "channel":
		if id := v.GetString("channel_id"); id != "" {
			return "<#" + id + ">"
		}
	case "broadcast":
		if rg := v.GetString("range"); rg != "" {
			return "<!" + rg + ">"
		}
	case "emoji":
		if name := v.GetString("name"); name != "" {
			return ":" + name + ":"
		}
	case "divider":
		return ""
	case "rich_text_section", "rich_text_quote", "rich_text_preformatted":
		var b strings.Builder
		for _, e := range v.Get("elements").Items() {
			b.WriteString(readable(e))
		}
		return b.String()
	case "rich_text_list":
		var lines []string
		for _, e := range v.Get("elements").Items() {
			if t := readable(e); strings.TrimSpace(t) != "" {
				lines = append(lines, "• "+t)
			}
		}
		return strings.Join(lines, "\n")
	}
	url := ""
	for _, k := range urlKeys {
		if u := strings.TrimSpace(v.GetString(k)); u != "" {
			url = u
			break
		}
	}
	var parts []string
	for i, k := range v.Keys {
		if nonProseKeys[k] || k == "user_id" || k == "channel_id" || k == "usergroup_id" || isURLKey(k) {
			continue
		}
		if t := readable(v.Vals[i]); strings.TrimSpace(t) != "" {
			parts = append(parts, t)
		}
	}
	if url != "" {
		if len(parts) > 0 && !strings.Contains(parts[0], "\n") && !strings.Contains(parts[0], "<") {
			parts[0] = slackLink(url, parts[0])
		} else {
			parts = append(parts, slackLink(url, ""))
		}
	}
	return strings.Join(parts, "\n")
}

func isURLKey(k string) bool {
	for _, u := range urlKeys {
		if k == u {
			return true
		}
	}
	return false
}

// slackLink writes a Slack link token for url with an optional label, or
// the label alone when url is not a web or mail address.
func slackLink(url, label string) string {
	url = entityDecoder.Replace(strings.TrimSpace(url))
	label = strings.TrimSpace(strings.ReplaceAll(label, "\n", " "))
	if !linkable(url) || !(strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "mailto:")) {
		if label != "" {
			return label
		}
		return escapeBare(url)
	}
	var sb strings.Builder
	sb.WriteByte('<')
	encodeURL(&sb, url)
	if label != "" && label != url {
		sb.WriteByte('|')
		sb.WriteString(escapeBare(strings.NewReplacer("|", string(labelBar), "<", "&lt;", ">", "&gt;").Replace(label)))
	}
	sb.WriteByte('>')
	return sb.String()
}

func isWebURL(u string) bool {
	return (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) && len(u) > len("https://") &&
		len(u) <= urlMax && !strings.ContainsAny(u, " \n\t<>")
}
