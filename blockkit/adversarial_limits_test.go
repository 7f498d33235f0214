package blockkit_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Slack's limits, read from Slack's Block Kit reference and counted in UTF-16
// code units (an emoji outside the BMP counts twice).

func advU16(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

type advLim struct{ probs []string }

func (l *advLim) add(path, format string, args ...any) {
	l.probs = append(l.probs, path+": "+fmt.Sprintf(format, args...))
}

func advStr(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

func advMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func advList(v any) ([]any, bool) {
	l, ok := v.([]any)
	return l, ok
}

func advWebURL(u string) bool {
	l := strings.ToLower(u)
	return (strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://")) && len(u) > len("https://") && !strings.ContainsAny(u, " \t\n<>")
}

// advLimitProblems checks one chat.postMessage body {"text", "blocks"}.
func advLimitProblems(m map[string]any) []string {
	l := &advLim{}
	text, _ := advStr(m["text"])
	blocks, _ := advList(m["blocks"])
	if strings.TrimSpace(text) == "" && len(blocks) == 0 {
		l.add("message", "has neither text nor blocks")
	}
	if n := advU16(text); n > 40000 {
		l.add("text", "is %d UTF-16 units; Slack truncates past 40000", n)
	}
	if len(blocks) > 50 {
		l.add("blocks", "%d blocks; a message takes at most 50", len(blocks))
	}
	ids := map[string]int{}
	tables, markdown := 0, 0
	for i, raw := range blocks {
		b := advMap(raw)
		typ, _ := advStr(b["type"])
		p := fmt.Sprintf("blocks[%d] (%s)", i, typ)
		if b == nil {
			l.add(p, "is not an object")
			continue
		}
		if v, ok := b["block_id"]; ok {
			id, _ := advStr(v)
			if n := advU16(id); n == 0 || n > 255 {
				l.add(p, "block_id is %d UTF-16 units; Slack takes 1 to 255", n)
			}
			if j, dup := ids[id]; dup {
				l.add(p, "block_id %q repeats blocks[%d]", id, j)
			}
			ids[id] = i
		}
		switch typ {
		case "section":
			advSection(l, p, b)
		case "header":
			advText(l, p+".text", b["text"], 150, true, true)
		case "context":
			els, _ := advList(b["elements"])
			if len(els) == 0 || len(els) > 10 {
				l.add(p, "has %d elements; Slack takes 1 to 10", len(els))
			}
			for k, e := range els {
				ep := fmt.Sprintf("%s.elements[%d]", p, k)
				if t, _ := advStr(advMap(e)["type"]); t == "image" {
					advImage(l, ep, advMap(e))
					continue
				}
				advText(l, ep, e, 2000, false, true)
			}
		case "divider":
		case "image":
			advImage(l, p, b)
			if b["title"] != nil {
				advText(l, p+".title", b["title"], 2000, true, true)
			}
		case "actions":
			els, _ := advList(b["elements"])
			if len(els) == 0 || len(els) > 25 {
				l.add(p, "has %d elements; Slack takes 1 to 25", len(els))
			}
			actionIDs := map[string]bool{}
			for k, e := range els {
				ep := fmt.Sprintf("%s.elements[%d]", p, k)
				advElement(l, ep, advMap(e), "actions")
				if id, _ := advStr(advMap(e)["action_id"]); id != "" {
					if actionIDs[id] {
						l.add(ep, "action_id %q repeats in this block; Slack needs it unique", id)
					}
					actionIDs[id] = true
				}
			}
		case "rich_text":
			advRichText(l, p, b)
		case "video":
			advVideo(l, p, b)
		case "markdown":
			s, _ := advStr(b["text"])
			if s == "" {
				l.add(p, "markdown text is empty")
			}
			markdown += advU16(s)
		case "table":
			tables++
			advTable(l, p, b)
		case "file":
			if s, _ := advStr(b["external_id"]); s == "" {
				l.add(p, "file block without external_id")
			}
		case "input":
			l.add(p, "input blocks belong in modals and Home tabs; chat.postMessage answers invalid_blocks")
		default:
			l.add(p, "block type %q is not a message block", typ)
		}
	}
	if markdown > 12000 {
		l.add("blocks", "markdown blocks hold %d UTF-16 units; Slack takes 12000 a message", markdown)
	}
	if tables > 1 {
		l.add("blocks", "%d table blocks; Slack takes one a message", tables)
	}
	return l.probs
}

// advText checks a text object: plain_text (or mrkdwn unless plainOnly),
// 1 to max UTF-16 units.
func advText(l *advLim, p string, v any, max int, plainOnly, required bool) {
	if v == nil {
		if required {
			l.add(p, "text object missing")
		}
		return
	}
	t := advMap(v)
	if t == nil {
		l.add(p, "is %T, not a text object", v)
		return
	}
	typ, _ := advStr(t["type"])
	switch {
	case plainOnly && typ != "plain_text":
		l.add(p, "type %q; this field takes plain_text only", typ)
	case typ != "plain_text" && typ != "mrkdwn":
		l.add(p, "type %q; a text object is plain_text or mrkdwn", typ)
	}
	s, ok := advStr(t["text"])
	n := advU16(s)
	switch {
	case !ok || n == 0:
		l.add(p, "text is empty; Slack needs at least 1 character")
	case n > max:
		l.add(p, "text is %d UTF-16 units; Slack takes %d", n, max)
	}
}

func advSection(l *advLim, p string, b map[string]any) {
	fields, hasFields := advList(b["fields"])
	if b["text"] == nil && len(fields) == 0 {
		l.add(p, "has neither text nor fields")
	}
	if b["text"] != nil {
		advText(l, p+".text", b["text"], 3000, false, true)
	}
	if hasFields && (len(fields) == 0 || len(fields) > 10) {
		l.add(p, "has %d fields; Slack takes 1 to 10", len(fields))
	}
	for k, f := range fields {
		advText(l, fmt.Sprintf("%s.fields[%d]", p, k), f, 2000, false, true)
	}
	if acc := b["accessory"]; acc != nil {
		advElement(l, p+".accessory", advMap(acc), "section")
	}
}

func advImage(l *advLim, p string, b map[string]any) {
	alt, _ := advStr(b["alt_text"])
	if n := advU16(alt); n == 0 || n > 2000 {
		l.add(p, "alt_text is %d UTF-16 units; Slack requires 1 to 2000", n)
	}
	u, hasURL := advStr(b["image_url"])
	file := advMap(b["slack_file"])
	switch {
	case hasURL && file != nil:
		l.add(p, "has both image_url and slack_file")
	case hasURL:
		if !advWebURL(u) {
			l.add(p, "image_url %q is not an http(s) URL", advShort(u))
		}
		if n := advU16(u); n > 3000 {
			l.add(p, "image_url is %d UTF-16 units; Slack takes 3000", n)
		}
	case file != nil:
		id, _ := advStr(file["id"])
		fu, _ := advStr(file["url"])
		if id == "" && fu == "" {
			l.add(p, "slack_file has neither id nor url")
		}
	default:
		l.add(p, "has neither image_url nor slack_file")
	}
}

func advVideo(l *advLim, p string, b map[string]any) {
	if alt, _ := advStr(b["alt_text"]); alt == "" {
		l.add(p, "video without alt_text (required)")
	}
	if b["title"] == nil {
		l.add(p, "video without title (required)")
	} else {
		advText(l, p+".title", b["title"], 199, true, true)
	}
	if b["description"] != nil {
		advText(l, p+".description", b["description"], 199, true, true)
	}
	for _, k := range []string{"video_url", "thumbnail_url"} {
		u, _ := advStr(b[k])
		switch {
		case u == "":
			l.add(p, "video without %s (required)", k)
		case !advWebURL(u):
			l.add(p, "%s %q is not an http(s) URL", k, advShort(u))
		case k == "video_url" && !strings.HasPrefix(strings.ToLower(u), "https://"):
			l.add(p, "video_url %q must be https", advShort(u))
		}
	}
	if a, _ := advStr(b["author_name"]); advU16(a) >= 50 {
		l.add(p, "author_name is %d UTF-16 units; Slack takes fewer than 50", advU16(a))
	}
}

var (
	advRichBlockElems = map[string]bool{"rich_text_section": true, "rich_text_list": true, "rich_text_preformatted": true, "rich_text_quote": true}
	advRichInline     = map[string]string{"text": "text", "link": "url", "user": "user_id", "channel": "channel_id", "usergroup": "usergroup_id", "emoji": "name", "broadcast": "range", "date": "timestamp", "color": "value", "team": "team_id"}
)

func advRichText(l *advLim, p string, b map[string]any) {
	els, _ := advList(b["elements"])
	if len(els) == 0 {
		l.add(p, "rich_text without elements")
	}
	for k, e := range els {
		advRichElement(l, fmt.Sprintf("%s.elements[%d]", p, k), advMap(e))
	}
}

func advRichElement(l *advLim, p string, e map[string]any) {
	typ, _ := advStr(e["type"])
	if !advRichBlockElems[typ] {
		l.add(p, "type %q is not a rich text element (section, list, preformatted, quote)", typ)
		return
	}
	els, _ := advList(e["elements"])
	if len(els) == 0 {
		l.add(p, "%s without elements", typ)
	}
	if typ == "rich_text_list" {
		if st, _ := advStr(e["style"]); st != "bullet" && st != "ordered" {
			l.add(p, "list style %q; Slack takes bullet or ordered", st)
		}
		for k, s := range els {
			if t, _ := advStr(advMap(s)["type"]); t != "rich_text_section" {
				l.add(fmt.Sprintf("%s.elements[%d]", p, k), "list item type %q; Slack takes rich_text_section", t)
			}
		}
		return
	}
	for k, s := range els {
		ip := fmt.Sprintf("%s.elements[%d]", p, k)
		m := advMap(s)
		t, _ := advStr(m["type"])
		key, ok := advRichInline[t]
		if !ok {
			l.add(ip, "inline type %q is not a rich text element", t)
			continue
		}
		if v, _ := advStr(m[key]); v == "" && t != "date" && t != "color" {
			l.add(ip, "%s element without %s", t, key)
		}
	}
}

func advTable(l *advLim, p string, b map[string]any) {
	rows, _ := advList(b["rows"])
	if len(rows) == 0 || len(rows) > 100 {
		l.add(p, "has %d rows; Slack takes 1 to 100", len(rows))
	}
	if cs, _ := advList(b["column_settings"]); len(cs) > 20 {
		l.add(p, "has %d column_settings; Slack takes 20", len(cs))
	}
	for r, raw := range rows {
		cells, ok := advList(raw)
		if !ok || len(cells) == 0 || len(cells) > 20 {
			l.add(fmt.Sprintf("%s.rows[%d]", p, r), "has %d cells; Slack takes 1 to 20", len(cells))
		}
		for c, cell := range cells {
			cp := fmt.Sprintf("%s.rows[%d][%d]", p, r, c)
			m := advMap(cell)
			switch t, _ := advStr(m["type"]); t {
			case "raw_text":
				if s, _ := advStr(m["text"]); s == "" {
					l.add(cp, "raw_text cell without text")
				}
			case "rich_text":
				advRichText(l, cp, m)
			default:
				l.add(cp, "cell type %q; Slack takes raw_text or rich_text", t)
			}
		}
	}
}

var (
	advDateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	advTimeRE = regexp.MustCompile(`^([01]\d|2[0-3]):[0-5]\d$`)
)

// advElement checks an interactive element in an actions block or a
// section accessory.
func advElement(l *advLim, p string, e map[string]any, where string) {
	if e == nil {
		l.add(p, "element is not an object")
		return
	}
	typ, _ := advStr(e["type"])
	if id, ok := advStr(e["action_id"]); ok && (id == "" || advU16(id) > 255) {
		l.add(p, "action_id is %d UTF-16 units; Slack takes 1 to 255", advU16(id))
	}
	if e["placeholder"] != nil {
		advText(l, p+".placeholder", e["placeholder"], 150, true, true)
	}
	switch typ {
	case "button":
		advText(l, p+".text", e["text"], 75, true, true)
		if u, ok := advStr(e["url"]); ok {
			if n := advU16(u); n == 0 || n > 3000 {
				l.add(p, "url is %d UTF-16 units; Slack takes 1 to 3000", n)
			}
		}
		if v, _ := advStr(e["value"]); advU16(v) > 2000 {
			l.add(p, "value is %d UTF-16 units; Slack takes 2000", advU16(v))
		}
		if st, ok := advStr(e["style"]); ok && st != "primary" && st != "danger" {
			l.add(p, "style %q; Slack takes primary or danger", st)
		}
	case "static_select", "multi_static_select":
		opts, hasOpts := advList(e["options"])
		groups, hasGroups := advList(e["option_groups"])
		switch {
		case hasOpts == hasGroups:
			l.add(p, "%s needs exactly one of options and option_groups", typ)
		case hasOpts && (len(opts) == 0 || len(opts) > 100):
			l.add(p, "%s has %d options; Slack takes 1 to 100", typ, len(opts))
		case hasGroups && (len(groups) == 0 || len(groups) > 100):
			l.add(p, "%s has %d option_groups; Slack takes 1 to 100", typ, len(groups))
		}
		advOptions(l, p, opts, true, false)
		for g, raw := range groups {
			gp := fmt.Sprintf("%s.option_groups[%d]", p, g)
			grp := advMap(raw)
			advText(l, gp+".label", grp["label"], 75, true, true)
			gopts, _ := advList(grp["options"])
			if len(gopts) == 0 || len(gopts) > 100 {
				l.add(gp, "has %d options; Slack takes 1 to 100", len(gopts))
			}
			advOptions(l, gp, gopts, true, false)
		}
	case "overflow":
		opts, _ := advList(e["options"])
		if len(opts) < 2 || len(opts) > 5 {
			l.add(p, "overflow has %d options; Slack takes 2 to 5", len(opts))
		}
		advOptions(l, p, opts, true, true)
	case "checkboxes", "radio_buttons":
		opts, _ := advList(e["options"])
		if len(opts) == 0 || len(opts) > 10 {
			l.add(p, "%s has %d options; Slack takes 1 to 10", typ, len(opts))
		}
		advOptions(l, p, opts, false, false)
	case "datepicker":
		if d, ok := advStr(e["initial_date"]); ok {
			if _, err := time.Parse("2006-01-02", d); !advDateRE.MatchString(d) || err != nil {
				l.add(p, "initial_date %q is not a real YYYY-MM-DD date", d)
			}
		}
	case "timepicker":
		if tm, ok := advStr(e["initial_time"]); ok && !advTimeRE.MatchString(tm) {
			l.add(p, "initial_time %q is not HH:mm", tm)
		}
	case "datetimepicker":
		if v, ok := e["initial_date_time"]; ok {
			if _, isNum := v.(json.Number); !isNum {
				l.add(p, "initial_date_time %v is not a UNIX timestamp", v)
			}
		}
	case "users_select", "conversations_select", "channels_select", "external_select",
		"multi_users_select", "multi_conversations_select", "multi_channels_select", "multi_external_select":
	case "workflow_button":
		advText(l, p+".text", e["text"], 75, true, true)
	case "image":
		if where != "section" {
			l.add(p, "image elements are not allowed in %s blocks", where)
		}
		advImage(l, p, e)
	default:
		l.add(p, "element type %q is not allowed in %s", typ, where)
	}
}

func advOptions(l *advLim, p string, opts []any, plainOnly, urlOK bool) {
	for k, raw := range opts {
		op := fmt.Sprintf("%s.options[%d]", p, k)
		o := advMap(raw)
		if o == nil {
			l.add(op, "option is %T, not an option object", raw)
			continue
		}
		advText(l, op+".text", o["text"], 75, plainOnly, true)
		v, ok := advStr(o["value"])
		if !ok || advU16(v) > 150 {
			l.add(op, "value is missing or over 150 UTF-16 units")
		}
		if o["description"] != nil {
			advText(l, op+".description", o["description"], 75, true, true)
		}
		if u, ok := advStr(o["url"]); ok && (!urlOK || advU16(u) > 3000) {
			l.add(op, "url not allowed here or over 3000 UTF-16 units")
		}
	}
}

func advShort(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}
