package blockkit

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"
)

// repNonProseKeys never hold words a person should read.
var repNonProseKeys = map[string]bool{
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
	"min_query_length": true, "response_url_enabled": true, "team_id": true, "mrkdwn_in": true, "icon": true, "icon_emoji": true, "icon_url": true,
}

// repURLKeys hold the target of a link; the readable text shows them as one.
var repURLKeys = []string{"url", "image_url", "video_url", "title_url", "author_link"}

// repReadable returns the words of any JSON value as mrkdwn-ish text:
// strings in order, links as <url|label>, rich-text mentions as tokens.
// It is what a block Slack would reject is turned into, so nothing the
// model wrote for the reader is lost.
func repReadable(n *repNode) string {
	if n == nil {
		return ""
	}
	switch n.kind {
	case 's', 'n', 'b':
		return n.text()
	case 'a':
		parts := make([]string, 0, len(n.vals))
		for _, v := range n.vals {
			if t := repReadable(v); strings.TrimSpace(t) != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	case 'o':
		return repReadableObject(n)
	}
	return ""
}

func repReadableObject(n *repNode) string {
	switch n.strField("type") {
	case "user":
		if id := n.strField("user_id"); id != "" {
			return "<@" + id + ">"
		}
	case "usergroup":
		if id := n.strField("usergroup_id"); id != "" {
			return "<!subteam^" + id + ">"
		}
	case "channel":
		if id := n.strField("channel_id"); id != "" {
			return "<#" + id + ">"
		}
	case "broadcast":
		if rg := n.strField("range"); rg != "" {
			return "<!" + rg + ">"
		}
	case "emoji":
		if name := n.strField("name"); name != "" {
			return ":" + name + ":"
		}
	case "divider":
		return ""
	case "rich_text_section", "rich_text_quote", "rich_text_preformatted":
		var b strings.Builder
		if els := n.get("elements"); els != nil && els.kind == 'a' {
			for _, e := range els.vals {
				b.WriteString(repReadable(e))
			}
		}
		return b.String()
	case "rich_text_list":
		var lines []string
		if els := n.get("elements"); els != nil && els.kind == 'a' {
			for _, e := range els.vals {
				if t := repReadable(e); strings.TrimSpace(t) != "" {
					lines = append(lines, "• "+t)
				}
			}
		}
		return strings.Join(lines, "\n")
	}
	url := ""
	for _, k := range repURLKeys {
		if u := strings.TrimSpace(n.strField(k)); u != "" {
			url = u
			break
		}
	}
	var parts []string
	for i, k := range n.keys {
		if repNonProseKeys[k] || k == "user_id" || k == "channel_id" || k == "usergroup_id" {
			continue
		}
		isURL := false
		for _, uk := range repURLKeys {
			isURL = isURL || k == uk
		}
		if isURL {
			continue
		}
		if t := repReadable(n.vals[i]); strings.TrimSpace(t) != "" {
			parts = append(parts, t)
		}
	}
	if url != "" {
		if len(parts) > 0 && !strings.Contains(parts[0], "\n") && !strings.Contains(parts[0], "<") {
			parts[0] = repLink(url, parts[0])
		} else {
			parts = append(parts, repLink(url, ""))
		}
	}
	return strings.Join(parts, "\n")
}

// imageSource returns the http(s) image URL of an image block or
// element, also under the names models use for it.
func (r *repairer) imageSource(n *repNode, path string) (url string, file *slack.SlackFileObject) {
	if sf := n.get("slack_file"); sf != nil && sf.kind == 'o' {
		if u := sf.strField("url"); repIsWebURL(u) {
			return "", &slack.SlackFileObject{URL: u}
		}
		if id := sf.strField("id"); id != "" {
			return "", &slack.SlackFileObject{ID: id}
		}
	}
	for _, k := range []string{"image_url", "url", "src", "image"} {
		if u := strings.TrimSpace(n.strField(k)); repIsWebURL(u) && len(u) <= repURLMax {
			if k != "image_url" {
				r.note(path+"."+k, "shape_coerced", k+" read as image_url")
			}
			return u, nil
		}
	}
	return "", nil
}

func repIsWebURL(u string) bool {
	return (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) && len(u) > len("https://") && !strings.ContainsAny(u, " \n\t<>")
}

// altText returns the alt text of an image, adding one when it is missing.
func (r *repairer) altText(n *repNode, path string) string {
	alt := strings.TrimSpace(n.strField("alt_text"))
	if alt == "" {
		alt = strings.TrimSpace(repPlainFromMrkdwn(repReadable(n.get("title")), true))
		if alt == "" {
			alt = "image"
		}
		r.note(path+".alt_text", "alt_text_added", "missing alt_text set to "+strconv.Quote(alt))
	}
	alt, _ = repClamp(alt, repAltTextMax, false)
	return alt
}

func (r *repairer) imageElement(n *repNode, path string) *slack.ImageBlockElement {
	url, file := r.imageSource(n, path)
	if url == "" && file == nil {
		return nil
	}
	el := &slack.ImageBlockElement{Type: slack.METImage, AltText: r.altText(n, path), SlackFile: file}
	if url != "" {
		el.ImageURL = &url
	}
	return el
}

// image repairs an image block; one without a usable URL becomes text.
func (r *repairer) image(n *repNode, path, id string) []slack.Block {
	url, file := r.imageSource(n, path)
	if url == "" && file == nil {
		return r.convert(n, path, "image without a usable image_url")
	}
	b := &slack.ImageBlock{Type: slack.MBTImage, ImageURL: url, SlackFile: file, AltText: r.altText(n, path), BlockID: id}
	if t := r.textObject(n.get("title"), path+".title", slack.PlainTextType); t != nil {
		t.Text, _ = repClamp(t.Text, repImageTitleMax, false)
		b.Title = t
	}
	return []slack.Block{b}
}

// repActionElementTypes are the interactive elements an actions block in a
// message may hold besides buttons, which Repair rebuilds itself.
var repActionElementTypes = map[string]func() slack.BlockElement{
	"overflow":             func() slack.BlockElement { return &slack.OverflowBlockElement{} },
	"datepicker":           func() slack.BlockElement { return &slack.DatePickerBlockElement{} },
	"timepicker":           func() slack.BlockElement { return &slack.TimePickerBlockElement{} },
	"checkboxes":           func() slack.BlockElement { return &slack.CheckboxGroupsBlockElement{} },
	"radio_buttons":        func() slack.BlockElement { return &slack.RadioButtonsBlockElement{} },
	"static_select":        func() slack.BlockElement { return &slack.SelectBlockElement{} },
	"external_select":      func() slack.BlockElement { return &slack.SelectBlockElement{} },
	"users_select":         func() slack.BlockElement { return &slack.SelectBlockElement{} },
	"conversations_select": func() slack.BlockElement { return &slack.SelectBlockElement{} },
	"channels_select":      func() slack.BlockElement { return &slack.SelectBlockElement{} },
}

// element repairs one interactive element; nil means it must become text.
func (r *repairer) element(n *repNode, path string, actionIDs map[string]bool) slack.BlockElement {
	if n.kind != 'o' {
		return nil
	}
	typ := n.strField("type")
	if typ == "" && n.has("text") && (n.has("url") || n.has("action_id") || n.has("value")) {
		r.note(path, "type_inferred", "missing element type inferred as button")
		typ = "button"
	}
	if typ == "button" {
		if b := r.button(n, path, actionIDs); b != nil {
			return b
		}
		return nil
	}
	mk, ok := repActionElementTypes[typ]
	if !ok {
		return nil
	}
	el := mk()
	if err := json.Unmarshal(n.marshal(), el); err != nil {
		return nil
	}
	return el
}

// button repairs a button: plain_text label of at most 75 characters, a
// web URL if any, a unique action_id.
func (r *repairer) button(n *repNode, path string, actionIDs map[string]bool) *slack.ButtonBlockElement {
	tv := n.get("text")
	if tv == nil {
		tv = n.get("label")
	}
	t := r.textObject(tv, path+".text", slack.PlainTextType)
	if t == nil {
		return nil
	}
	t.Text = strings.Join(strings.Fields(t.Text), " ")
	if clamped, cut := repClamp(t.Text, repButtonTextMax, false); cut {
		r.note(path+".text", "text_clamped", fmt.Sprintf("button text cut to %d characters", repButtonTextMax))
		t.Text = clamped
	}
	b := &slack.ButtonBlockElement{Type: slack.METButton, Text: t}
	if u := strings.TrimSpace(n.strField("url")); u != "" {
		if !repIsWebURL(u) || len(u) > repURLMax {
			return nil
		}
		b.URL = u
	}
	if id := n.strField("action_id"); id != "" && Len(id) <= repActionIDMax-4 {
		base := id
		for k := 2; actionIDs[id]; k++ {
			id = base + "-" + strconv.Itoa(k)
		}
		if id != base {
			r.note(path+".action_id", "action_id_changed", fmt.Sprintf("duplicate action_id %q renamed %q", base, id))
		}
		actionIDs[id] = true
		b.ActionID = id
	}
	if v := n.strField("value"); v != "" && Len(v) <= repButtonValueMax {
		b.Value = v
	}
	if s := n.strField("style"); s == "primary" || s == "danger" {
		b.Style = slack.Style(s)
	}
	return b
}

// actions repairs an actions block: elements Slack cannot show become a
// section of their text, and more than 25 elements go into further blocks.
func (r *repairer) actions(n *repNode, path, id string) []slack.Block {
	ev, epath := n.get("elements"), path+".elements"
	if ev == nil {
		ev, epath = n.get("buttons"), path+".buttons"
	}
	if ev == nil && n.strField("type") == "button" {
		// A lone button written as a block.
		ev, epath = &repNode{kind: 'a', vals: []*repNode{n}}, path
	}
	var items []*repNode
	switch {
	case ev == nil || ev.kind == 'z':
	case ev.kind == 'a':
		items = ev.vals
	default:
		items = []*repNode{ev}
	}
	var els []slack.BlockElement
	var texts []string
	actionIDs := map[string]bool{}
	for i, item := range items {
		ip := epath
		if ev.kind == 'a' && epath != path {
			ip = epath + "[" + strconv.Itoa(i) + "]"
		}
		if el := r.element(item, ip, actionIDs); el != nil {
			els = append(els, el)
			continue
		}
		if txt := repReadable(item); strings.TrimSpace(txt) != "" {
			r.note(ip, "element_converted", "element without its required fields kept as text")
			texts = append(texts, txt)
		}
	}
	var out []slack.Block
	for i := 0; i < len(els); i += repActionsMax {
		chunk := els[i:min(i+repActionsMax, len(els))]
		out = append(out, &slack.ActionBlock{Type: slack.MBTAction, BlockID: id, Elements: &slack.BlockElements{ElementSet: chunk}})
		id = ""
	}
	if len(out) > 1 {
		r.note(epath, "actions_split", fmt.Sprintf("%d elements spread over %d actions blocks (at most %d each)", len(els), len(out), repActionsMax))
	}
	if len(texts) > 0 {
		out = append(out, r.textSections(strings.Join(texts, "\n"), path)...)
	}
	if len(out) == 0 {
		r.note(path, "empty_dropped", "actions without elements")
	}
	return out
}

// accessory repairs a section accessory. One that cannot be shown is
// returned as sections of its text instead.
func (r *repairer) accessory(n *repNode, path string) (*slack.Accessory, []slack.Block) {
	if n.kind == 'o' {
		typ := n.strField("type")
		if typ == "image" || (typ == "" && (n.has("image_url") || n.has("slack_file"))) {
			if img := r.imageElement(n, path); img != nil {
				return slack.NewAccessory(img), nil
			}
		} else if el := r.element(n, path, map[string]bool{}); el != nil {
			return slack.NewAccessory(el), nil
		}
	}
	txt := repReadable(n)
	if strings.TrimSpace(txt) == "" {
		r.note(path, "empty_dropped", "empty accessory")
		return nil, nil
	}
	r.note(path, "accessory_converted", "accessory without its required fields kept as text")
	return nil, r.textSections(txt, path)
}

// table repairs a table block: cells become raw_text, rows are padded to
// one width, more than TableMaxRows rows or TableMaxChars characters go
// into further tables (each repeating the first row as its header), and a
// table wider than TableMaxCells becomes a monospaced code block.
func (r *repairer) table(n *repNode, path, id string) []slack.Block {
	rv := n.get("rows")
	if rv == nil || rv.kind != 'a' {
		return r.convert(n, path, "table without rows")
	}
	var rows [][]string
	width := 0
	for i, row := range rv.vals {
		rp := path + ".rows[" + strconv.Itoa(i) + "]"
		var cells []*repNode
		switch {
		case row.kind == 'a':
			cells = row.vals
		case row.kind == 'o' && row.get("cells") != nil && row.get("cells").kind == 'a':
			cells = row.get("cells").vals
		default:
			r.note(rp, "shape_coerced", "row that is not a list read as one cell")
			cells = []*repNode{row}
		}
		texts := make([]string, len(cells))
		for j, c := range cells {
			texts[j] = r.cellText(c, rp+"["+strconv.Itoa(j)+"]")
		}
		rows = append(rows, texts)
		width = max(width, len(texts))
	}
	if len(rows) == 0 || width == 0 {
		r.note(path, "empty_dropped", "table without cells")
		return nil
	}
	padded := false
	for i := range rows {
		for len(rows[i]) < width {
			rows[i] = append(rows[i], "")
			padded = true
		}
	}
	if padded {
		r.note(path+".rows", "shape_coerced", fmt.Sprintf("short rows padded to %d cells", width))
	}
	if width > TableMaxCells {
		r.note(path, "table_converted", fmt.Sprintf("%d columns (at most %d): shown as a code block", width, TableMaxCells))
		return r.sections(&slack.TextBlockObject{Type: slack.MarkdownType, Text: repTableCode(rows)}, id)
	}
	var settings []slack.ColumnSetting
	if cs := n.get("column_settings"); cs != nil && cs.kind == 'a' {
		for _, c := range cs.vals {
			if len(settings) == width {
				break
			}
			s := slack.ColumnSetting{Align: slack.ColumnAlignmentLeft}
			switch a := slack.ColumnAlignment(c.strField("align")); a {
			case slack.ColumnAlignmentCenter, slack.ColumnAlignmentRight:
				s.Align = a
			}
			if w := c.get("is_wrapped"); w != nil && w.kind == 'b' {
				s.IsWrapped = w.b
			}
			settings = append(settings, s)
		}
	}
	rowChars := func(row []string) int {
		n := 0
		for _, c := range row {
			n += Len(c)
		}
		return n
	}
	head := rowChars(rows[0])
	for _, row := range rows[1:] {
		if head+rowChars(row) > TableMaxChars {
			r.note(path, "table_converted", fmt.Sprintf("a row too long for a table (at most %d characters): shown as a code block", TableMaxChars))
			return r.sections(&slack.TextBlockObject{Type: slack.MarkdownType, Text: repTableCode(rows)}, id)
		}
	}
	// Each table repeats the header row and stays within the row and
	// character limits of one table.
	var chunks [][][]string
	cur, chars := [][]string{rows[0]}, head
	for _, row := range rows[1:] {
		c := rowChars(row)
		if len(cur) == TableMaxRows || chars+c > TableMaxChars {
			chunks = append(chunks, cur)
			cur, chars = [][]string{rows[0]}, head
		}
		cur = append(cur, row)
		chars += c
	}
	chunks = append(chunks, cur)
	var out []slack.Block
	for _, chunk := range chunks {
		t := &slack.TableBlock{Type: slack.MBTTable, BlockID: id, ColumnSettings: settings}
		for _, row := range chunk {
			cells := make([]slack.TableCell, len(row))
			for j, c := range row {
				if c == "" {
					c = " " // Slack needs raw_text to be non-empty
				}
				cells[j] = slack.NewTableRawTextCell(c)
			}
			t.Rows = append(t.Rows, cells)
		}
		out = append(out, t)
		id = ""
	}
	if len(out) > 1 {
		r.note(path+".rows", "table_split", fmt.Sprintf("%d rows spread over %d tables (at most %d rows and %d characters each, header repeated)", len(rows), len(out), TableMaxRows, TableMaxChars))
	}
	return out
}

// cellText reads one table cell as plain text.
func (r *repairer) cellText(c *repNode, path string) string {
	var s string
	switch c.kind {
	case 's', 'n', 'b':
		s = c.text()
	case 'o':
		switch c.strField("type") {
		case "raw_text", "":
			s = c.get("text").text()
			if s == "" {
				s = repReadable(c)
			}
		case "raw_number":
			if t := c.strField("text"); t != "" {
				s = t
			} else {
				s = c.get("value").text()
			}
		default:
			s = repPlainFromMrkdwn(repReadable(c), true)
		}
	case 'a':
		s = repReadable(c)
	}
	s = strings.Join(strings.Fields(s), " ")
	if repMarkdownSignals(s) {
		r.note(path, "markdown_converted", "Markdown in a table cell rendered as plain text")
		s = strings.TrimSpace(PlainText(s))
	}
	return s
}

// repTableCode lays rows out as an aligned, monospaced mrkdwn code block.
func repTableCode(rows [][]string) string {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for j, c := range row {
			widths[j] = max(widths[j], Len(c))
		}
	}
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	var b strings.Builder
	b.WriteString("```\n")
	for _, row := range rows {
		for j, c := range row {
			if j > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(esc.Replace(c))
			if j < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[j]-Len(c)))
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("```")
	return b.String()
}
