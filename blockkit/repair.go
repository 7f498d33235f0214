package blockkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"
)

// Change records one repair made to a model's Block Kit. Path points into the
// payload as the model wrote it ("messages[0].blocks[2].text"); Kind is a
// short stable token, fit for a metrics label; Detail says what was done.
//
// Kinds: json_decoded, json_invalid, markdown_message, blocks_wrapped,
// shape_coerced, markdown_converted, entities_escaped, text_wrapped,
// text_type_fixed, type_inferred, type_fixed, block_converted,
// markdown_block_converted, element_converted, accessory_converted,
// alt_text_added, block_id_removed, action_id_changed, empty_dropped,
// section_split, fields_split, field_moved, context_split, actions_split,
// header_clamped, context_clamped, text_clamped, table_converted,
// table_split, message_split, fallback_used, empty_answer.
type Change struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Detail string `json:"detail,omitempty"`
}

// String formats the change as "path: kind: detail".
func (c Change) String() string {
	if c.Detail == "" {
		return c.Path + ": " + c.Kind
	}
	return c.Path + ": " + c.Kind + ": " + c.Detail
}

// emptyAnswerText is what the user sees when the model answered nothing at all.
const emptyAnswerText = "The answer was empty."

// repMaxStringDepth bounds how often a JSON string holding JSON is unwrapped.
const repMaxStringDepth = 3

// ErrNotObject is returned by RepairReport when the report is not a JSON object.
var ErrNotObject = errors.New("blockkit: final report arguments are not a JSON object")

// RepairReport repairs the arguments of an agent__final_report call made in
// slack-block-kit format. It reads "messages" (or, failing that, "blocks")
// and falls back to "report_content" (alias "content"). The error is
// non-nil only when report is not a JSON object; otherwise at least one
// valid message is returned.
func RepairReport(report json.RawMessage) ([]Message, []Change, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(report, &fields); err != nil || fields == nil {
		if err == nil {
			err = errors.New("null")
		}
		return nil, nil, fmt.Errorf("%w: %v", ErrNotObject, err)
	}
	content := fields["report_content"]
	if repIsEmptyJSON(content) {
		content = fields["content"]
	}
	fallback := ""
	if !repIsEmptyJSON(content) {
		if err := json.Unmarshal(content, &fallback); err != nil {
			// Not a string: keep its words rather than lose them.
			if n, perr := repParseJSON(content); perr == nil {
				fallback = repReadable(n)
			} else {
				fallback = string(content)
			}
		}
	}
	messages, path := fields["messages"], "messages"
	if repIsEmptyJSON(messages) && !repIsEmptyJSON(fields["blocks"]) {
		messages, path = fields["blocks"], "blocks"
	}
	r := newRepairer()
	if path == "blocks" {
		r.note("blocks", "shape_coerced", "blocks given at the top level instead of messages")
	}
	return r.run(messages, path, fallback), r.changes, nil
}

// Repair turns the messages an LLM wrote for a slack-block-kit final report
// into messages Slack accepts. It takes every shape models produce: an
// array of {"blocks":[…]} messages, a bare array of blocks, one object with
// blocks, Markdown strings, and any of these inside a JSON string. Markdown
// in mrkdwn text is converted, missing types are inferred, unknown blocks
// become sections with their readable text, texts are clamped or split to
// Slack's limits, and long answers are split over several messages. When
// nothing usable is left, fallbackMarkdown (the report_content) is
// converted instead. The result always has at least one message and every
// message passes Validate; each repair is listed as a Change.
func Repair(messages json.RawMessage, fallbackMarkdown string) ([]Message, []Change) {
	r := newRepairer()
	return r.run(messages, "messages", fallbackMarkdown), r.changes
}

// repairer carries the state of one Repair call.
type repairer struct {
	changes []Change
	out     []Message
	// pending holds loose blocks (a bare array of blocks) until a message
	// boundary; pendingPath is where they started.
	pending     []slack.Block
	pendingPath string
	ids         map[string]bool
}

func newRepairer() *repairer { return &repairer{ids: map[string]bool{}} }

func (r *repairer) note(path, kind, detail string) {
	r.changes = append(r.changes, Change{Path: path, Kind: kind, Detail: detail})
}

func (r *repairer) run(messages json.RawMessage, path, fallback string) []Message {
	r.top(messages, path)
	r.flush()
	if len(r.out) == 0 && strings.TrimSpace(fallback) != "" {
		reason := "messages missing or empty"
		if !repIsEmptyJSON(messages) {
			reason = "nothing usable in messages"
		}
		r.note(path, "fallback_used", reason+"; answer built from report_content")
		r.out = append(r.out, FromMarkdown(fallback)...)
	}
	if len(r.out) == 0 {
		r.note(path, "empty_answer", "no messages and no report_content")
		r.out = append(r.out, Message{
			Text:   emptyAnswerText,
			Blocks: []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "_"+emptyAnswerText+"_", false, false), nil, nil)},
		})
	}
	return r.out
}

func repIsEmptyJSON(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null" || s == `""` || s == "[]" || s == "{}"
}

// top handles the raw messages value.
func (r *repairer) top(raw json.RawMessage, path string) {
	if repIsEmptyJSON(raw) {
		return
	}
	n, err := repParseJSON(raw)
	if err != nil {
		if t := strings.TrimSpace(string(raw)); !repLooksLikeJSON(t) {
			// Not JSON at all: the model wrote prose where JSON belongs.
			r.topString(t, path, repMaxStringDepth)
			return
		}
		r.pendingAt(path)
		r.pending = append(r.pending, r.salvage(raw, path, err)...)
		return
	}
	r.topValue(n, path, 0)
}

// salvage keeps the strings of a payload that does not parse.
func (r *repairer) salvage(raw []byte, path string, err error) []slack.Block {
	strs := repSalvageStrings(raw)
	r.note(path, "json_invalid", fmt.Sprintf("%v; kept %d text(s)", err, len(strs)))
	if len(strs) == 0 {
		return nil
	}
	return r.textSections(strings.Join(strs, "\n\n"), path)
}

func (r *repairer) pendingAt(path string) {
	if len(r.pending) == 0 {
		r.pendingPath = path
	}
}

// topValue handles a value where a list of messages is expected.
func (r *repairer) topValue(n *repNode, path string, depth int) {
	switch n.kind {
	case 'z':
	case 's':
		r.topString(n.str, path, depth)
	case 'n', 'b':
		r.pendingAt(path)
		r.pending = append(r.pending, r.textSections(n.text(), path)...)
	case 'o':
		r.topItem(n, path, depth, true, false)
	case 'a':
		// A list holding typed blocks is a list of blocks: an untyped
		// {"text": …} in it is a section, not a message of its own.
		blockList := false
		for _, item := range n.vals {
			blockList = blockList || item.kind == 'o' && item.has("type") && !item.has("blocks")
		}
		for i, item := range n.vals {
			ip := path + "[" + strconv.Itoa(i) + "]"
			switch item.kind {
			case 'o':
				r.topItem(item, ip, depth, false, blockList)
			case 's':
				r.flush()
				r.topString(item.str, ip, depth)
			case 'a':
				r.flush()
				r.note(ip, "shape_coerced", "array of blocks read as one message")
				r.pack(r.blocksValue(item, ip, depth), ip)
			case 'n', 'b':
				r.pendingAt(ip)
				r.pending = append(r.pending, r.textSections(item.text(), ip)...)
			}
		}
	}
}

// topItem handles one object where a message is expected.
func (r *repairer) topItem(n *repNode, path string, depth int, single, inBlockList bool) {
	switch {
	case n.has("blocks") || n.has("attachments"):
		r.flush()
		if single {
			r.note(path, "shape_coerced", "a single message where a list belongs")
		}
		r.message(n, path, depth)
	case n.has("messages"):
		r.note(path, "shape_coerced", "nested messages unwrapped")
		r.topValue(n.get("messages"), path+".messages", depth)
	case !inBlockList && !n.has("type") && !repLooksLikeBlock(n) && n.get("text") != nil && n.get("text").kind == 's':
		// {"text": "…"}: a message without blocks; its text is Markdown.
		r.flush()
		r.note(path, "markdown_message", "message without blocks: text converted from Markdown")
		r.out = append(r.out, FromMarkdown(n.get("text").str)...)
	default:
		if len(r.pending) == 0 {
			detail := "bare blocks wrapped in a message"
			if single {
				detail = "a single block wrapped in a message"
			}
			r.note(path, "blocks_wrapped", detail)
		}
		r.pendingAt(path)
		r.pending = append(r.pending, r.block(n, path)...)
	}
}

// repLooksLikeBlock reports whether an object without "type" still has a
// field only blocks have.
func repLooksLikeBlock(n *repNode) bool {
	for _, k := range []string{"fields", "elements", "accessory", "image_url", "rows", "block_id"} {
		if n.has(k) {
			return true
		}
	}
	return false
}

// topString handles a string where messages are expected: JSON inside a
// string, or Markdown.
func (r *repairer) topString(s, path string, depth int) {
	if n, salvaged, ok := r.jsonInString(s, path, depth); ok {
		if n != nil {
			r.topValue(n, path, depth+1)
		} else {
			r.pendingAt(path)
			r.pending = append(r.pending, salvaged...)
		}
		return
	}
	if strings.TrimSpace(s) == "" {
		return
	}
	r.flush()
	r.note(path, "markdown_message", "string converted from Markdown")
	r.out = append(r.out, FromMarkdown(s)...)
}

// jsonInString decodes s when it holds JSON. ok reports that s was handled:
// either n is its value, or it was broken JSON and salvaged holds its words.
func (r *repairer) jsonInString(s, path string, depth int) (n *repNode, salvaged []slack.Block, ok bool) {
	t := strings.TrimSpace(s)
	if depth >= repMaxStringDepth || len(t) < 2 || (t[0] != '[' && t[0] != '{') {
		return nil, nil, false
	}
	n, err := repParseJSON([]byte(t))
	if err == nil {
		r.note(path, "json_decoded", "JSON given as a string")
		return n, nil, true
	}
	// Only text that clearly meant to be JSON is salvaged; "[1] see…" is prose.
	if repLooksLikeJSON(t) {
		return nil, r.salvage([]byte(t), path, err), true
	}
	return nil, nil, false
}

// repLooksLikeJSON reports whether t starts the way a JSON object or an
// array of objects does.
func repLooksLikeJSON(t string) bool {
	rest := strings.TrimLeft(t[1:], " \t\r\n")
	if t[0] == '{' {
		return strings.HasPrefix(rest, `"`) || rest == "" || rest[0] == '}'
	}
	return strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, `"`) || strings.HasPrefix(rest, "[")
}

// message handles one {"blocks": …} object.
func (r *repairer) message(n *repNode, path string, depth int) {
	var blocks []slack.Block
	if v := n.get("blocks"); v != nil {
		blocks = r.blocksValue(v, path+".blocks", depth)
	}
	if att := n.get("attachments"); att != nil && att.kind == 'a' {
		for i, a := range att.vals {
			ap := path + ".attachments[" + strconv.Itoa(i) + "]"
			if a.has("blocks") {
				r.note(ap, "shape_coerced", "attachment blocks moved into the message")
				blocks = append(blocks, r.blocksValue(a.get("blocks"), ap+".blocks", depth)...)
				continue
			}
			if txt := repReadable(a); txt != "" {
				r.note(ap, "block_converted", "legacy attachment turned into a section")
				blocks = append(blocks, r.textSections(txt, ap)...)
			}
		}
	}
	if len(blocks) == 0 {
		if t := n.get("text"); t != nil && t.kind == 's' && strings.TrimSpace(t.str) != "" {
			r.note(path+".text", "markdown_message", "message without blocks: text converted from Markdown")
			r.out = append(r.out, FromMarkdown(t.str)...)
			return
		}
	}
	r.pack(blocks, path)
}

// blocksValue handles a value where a list of blocks is expected.
func (r *repairer) blocksValue(v *repNode, path string, depth int) []slack.Block {
	switch v.kind {
	case 'a':
		var out []slack.Block
		for i, item := range v.vals {
			out = append(out, r.blockItem(item, path+"["+strconv.Itoa(i)+"]", depth)...)
		}
		return out
	case 'o':
		if v.has("blocks") {
			r.note(path, "shape_coerced", "nested blocks unwrapped")
			return r.blocksValue(v.get("blocks"), path+".blocks", depth)
		}
		r.note(path, "shape_coerced", "a single block where a list belongs")
		return r.block(v, path)
	default:
		return r.blockItem(v, path, depth)
	}
}

// blockItem handles one entry of a blocks list.
func (r *repairer) blockItem(item *repNode, path string, depth int) []slack.Block {
	switch item.kind {
	case 'o':
		return r.block(item, path)
	case 'a':
		return r.blocksValue(item, path, depth)
	case 's':
		if n, salvaged, ok := r.jsonInString(item.str, path, depth); ok {
			if n == nil {
				return salvaged
			}
			return r.blocksValue(n, path, depth+1)
		}
		if strings.TrimSpace(item.str) == "" {
			r.note(path, "empty_dropped", "empty string")
			return nil
		}
		r.note(path, "markdown_message", "string in blocks converted from Markdown")
		var out []slack.Block
		for _, m := range FromMarkdown(item.str) {
			out = append(out, m.Blocks...)
		}
		return out
	case 'n', 'b':
		return r.textSections(item.text(), path)
	}
	return nil
}

// flush packs the loose blocks collected so far into messages.
func (r *repairer) flush() {
	if len(r.pending) == 0 {
		return
	}
	blocks, path := r.pending, r.pendingPath
	r.pending = nil
	r.pack(blocks, path)
}

// pack splits blocks into messages of at most MaxBlocks blocks,
// MaxMessageChars characters and one table, and emits them.
func (r *repairer) pack(blocks []slack.Block, path string) {
	if len(blocks) == 0 {
		return
	}
	if repOnlyDividers(blocks) {
		r.note(path, "empty_dropped", "message with nothing but dividers")
		return
	}
	var (
		groups   [][]slack.Block
		cur      []slack.Block
		chars    int
		hasTable bool
	)
	for _, b := range blocks {
		c := repBlockChars(b)
		_, isTable := b.(*slack.TableBlock)
		if len(cur) > 0 && (len(cur) == MaxBlocks || chars+c > MaxMessageChars || isTable && hasTable) {
			groups = append(groups, cur)
			cur, chars, hasTable = nil, 0, false
		}
		cur = append(cur, b)
		chars += c
		hasTable = hasTable || isTable
	}
	groups = append(groups, cur)
	if len(groups) > 1 {
		r.note(path, "message_split", fmt.Sprintf("%d blocks split over %d messages (limits: %d blocks, %d characters, one table)", len(blocks), len(groups), MaxBlocks, MaxMessageChars))
	}
	for _, g := range groups {
		r.emit(g, path, 0)
	}
}

// emit appends one message, splitting it further if Validate still objects.
// Every block was validated alone already, so a message that fails holds
// blocks that only fail together (total size, tables per message): halving
// converges.
func (r *repairer) emit(blocks []slack.Block, path string, depth int) {
	m := Message{Text: repFallbackText(blocks), Blocks: blocks}
	err := Validate(m)
	if err == nil {
		r.out = append(r.out, m)
		return
	}
	if len(blocks) > 1 {
		r.note(path, "message_split", "split further: "+repFirstLine(err.Error()))
		half := len(blocks) / 2
		r.emit(blocks[:half], path, depth)
		r.emit(blocks[half:], path, depth)
		return
	}
	if depth == 0 {
		r.note(path, "block_converted", "block rejected: "+repFirstLine(err.Error()))
		for _, b := range r.blockAsText(blocks[0], path) {
			r.emit([]slack.Block{b}, path, 1)
		}
		return
	}
	// A plain section of at most SectionTextMax characters that still fails
	// Validate is a bug in this package; keep the message rather than lose it.
	r.out = append(r.out, m)
}

func repOnlyDividers(blocks []slack.Block) bool {
	for _, b := range blocks {
		if _, ok := b.(*slack.DividerBlock); !ok {
			return false
		}
	}
	return true
}

func repFirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// repBlockChars estimates the characters a block contributes to a message.
func repBlockChars(b slack.Block) int {
	switch b := b.(type) {
	case *slack.SectionBlock:
		n := 0
		if b.Text != nil {
			n += Len(b.Text.Text)
		}
		for _, f := range b.Fields {
			n += Len(f.Text)
		}
		return n
	case *slack.HeaderBlock:
		if b.Text != nil {
			return Len(b.Text.Text)
		}
		return 0
	case *slack.DividerBlock:
		return 0
	}
	return Len(repBlockReadable(b))
}

// repBlockReadable returns the readable text of any block.
func repBlockReadable(b slack.Block) string {
	switch b := b.(type) {
	case *slack.SectionBlock:
		var parts []string
		if b.Text != nil {
			parts = append(parts, b.Text.Text)
		}
		for _, f := range b.Fields {
			parts = append(parts, f.Text)
		}
		return strings.Join(parts, "\n")
	case *slack.HeaderBlock:
		if b.Text != nil {
			return b.Text.Text
		}
		return ""
	case *slack.DividerBlock:
		return ""
	}
	data, err := json.Marshal(b)
	if err != nil {
		return ""
	}
	n, err := repParseJSON(data)
	if err != nil {
		return ""
	}
	return repReadable(n)
}

// repFallbackTextMax bounds the notification text; the blocks carry the rest.
const repFallbackTextMax = 3000

// repFallbackText builds the plain notification text of a message.
func repFallbackText(blocks []slack.Block) string {
	var parts []string
	for _, b := range blocks {
		if t := strings.TrimSpace(repBlockReadable(b)); t != "" {
			parts = append(parts, t)
		}
	}
	text := strings.TrimSpace(repPlainFromMrkdwn(strings.Join(parts, "\n"), false))
	if text == "" {
		return "(message)"
	}
	text, _ = repClamp(text, repFallbackTextMax, true)
	return text
}
