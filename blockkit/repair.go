package blockkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit/internal/jsonish"
)

// Repair runs in four steps, one file each:
//
//  1. read (this file): the payload becomes a JSON tree, however the model
//     wrote it (jsonish: fenced, single-quoted, over-escaped, in a string,
//     cut off), and the report's fields are chosen: the messages, or
//     report_content when the messages hold no Block Kit.
//  2. shape (repair_shape.go): every shape models write for a list of
//     messages is read as messages, each a list of blocks as written.
//  3. build (repair_block.go, and for their parts repair_text.go,
//     repair_element.go, repair_media.go, repair_table.go,
//     repair_attachment.go): each block is rebuilt as a slack-go block
//     Slack accepts; what cannot be kept becomes its words as text
//     (repair_readable.go).
//  4. pack (repair_pack.go): blocks are packed into messages within
//     Slack's limits, each checked with Validate, each with its
//     notification text.

// Change records one repair made to a model's Block Kit. Path points into the
// payload as the model wrote it ("messages[0].blocks[2].text"); Kind is a
// short stable token, fit for a metrics label; Detail says what was done.
//
// Kinds, by step:
//
//   - reading: json_decoded (JSON given as a string), json_unfenced (JSON
//     inside a ``` fence), json_relaxed (single quotes, Python literals,
//     unquoted keys or trailing commas rewritten), json_unescaped (quotes
//     escaped once too often), json_invalid (unreadable JSON; its strings
//     kept), fallback_used (the answer built from report_content),
//     empty_answer.
//   - shape: markdown_message, blocks_wrapped, shape_coerced, text_kept
//     (the text of a message with legacy attachments and no blocks shown
//     above them).
//   - text: markdown_converted, entities_escaped, entities_unescaped
//     (mrkdwn escaped twice throughout, &amp;gt; for &gt;, unescaped once;
//     an entity in plain_text or a table cell, which show text as written,
//     decoded), text_wrapped,
//     text_type_fixed, link_flattened (a link too long for any section
//     written as its label and address).
//   - blocks: type_inferred, type_fixed, block_converted,
//     markdown_block_converted, attachment_converted, alt_text_added,
//     alt_text_moved (alt text over 2000 characters shortened on the image,
//     shown whole after it),
//     block_id_removed, empty_dropped, section_split, fields_split,
//     field_moved, context_split, header_split and context_text_split
//     (text over the limit continued in the next block),
//     table_converted, table_split.
//   - elements: element_converted (an element Slack would refuse, kept as
//     text or as another element), element_fixed (an element repaired in
//     place), label_moved (a button label over 75 characters shortened, its
//     full words shown after the buttons), accessory_converted,
//     action_id_changed, actions_split.
//   - pack: message_split.
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

// maxStringDepth bounds how often a JSON string holding JSON is unwrapped.
const maxStringDepth = 3

// ErrNotObject is returned by RepairReport when the report is not a JSON object.
var ErrNotObject = errors.New("blockkit: final report arguments are not a JSON object")

// RepairReport repairs the whole arguments object of an agent__final_report
// call made in slack-block-kit format. The messages are read from
// "messages", else "message", else "blocks" and "attachments" given at the
// top level; "report_content" (alias "content", or "text" when there are no
// blocks) is the Markdown answer used when the messages are missing, empty
// or hold no Block Kit. The error is non-nil only when report is not a JSON
// object; otherwise at least one valid message is returned.
func RepairReport(report json.RawMessage) ([]Message, []Change, error) {
	top, err := jsonish.Parse(report)
	if err == nil && top.Kind != jsonish.Object {
		err = errors.New("not an object")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrNotObject, err)
	}
	r := newRepairer()
	var messages *jsonish.Value
	path := "messages"
	switch {
	case !isEmptyValue(top.Get("messages")):
		messages = top.Get("messages")
	case !isEmptyValue(top.Get("message")):
		messages, path = top.Get("message"), "message"
		r.note(path, "shape_coerced", `"message" read as "messages"`)
	case !isEmptyValue(top.Get("attachments")):
		messages, path = &jsonish.Value{Kind: jsonish.Object}, ""
		messages.Set("attachments", top.Get("attachments"))
		if b := top.Get("blocks"); !isEmptyValue(b) {
			messages.Set("blocks", b)
		}
		r.note("attachments", "shape_coerced", "attachments given at the top level instead of messages")
	case !isEmptyValue(top.Get("blocks")):
		messages, path = top.Get("blocks"), "blocks"
		r.note(path, "shape_coerced", "blocks given at the top level instead of messages")
	}
	content := top.Get("report_content")
	for _, alias := range []string{"content", "text"} {
		if isEmptyValue(content) && (alias != "text" || messages == nil) {
			content = top.Get(alias)
		}
	}
	fallback := ""
	if !isEmptyValue(content) {
		fallback = content.Text()
		if content.Kind == jsonish.Object || content.Kind == jsonish.Array {
			fallback = readable(content) // not a string: keep its words
		}
	}
	return r.run(messages, path, fallback), r.changes, nil
}

// Repair turns the messages an LLM wrote for a slack-block-kit final report
// into messages Slack accepts. It takes every shape models produce: an
// array of {"blocks":[…]} messages, a bare array of blocks, one object with
// blocks, legacy attachments, Markdown strings, and any of these as JSON
// inside a string or a ```json fence, single-quoted or over-escaped.
// Markdown in mrkdwn text is converted, missing types are inferred, blocks
// and elements Slack would refuse become text, texts over Slack's limits
// continue in further blocks, and long answers are split over several
// messages. When the messages hold no Block Kit (missing, empty, prose,
// a number), fallbackMarkdown (the report_content) is converted instead,
// after any words of the messages it lacks; Block Kit JSON a model put in
// the report_content is read as blocks.
// The result always has at least one message and every message passes
// Validate; each repair is listed as a Change.
func Repair(messages json.RawMessage, fallbackMarkdown string) ([]Message, []Change) {
	r := newRepairer()
	return r.run(r.read(messages, "messages"), "messages", fallbackMarkdown), r.changes
}

// repairer carries the state of one repair.
type repairer struct {
	changes []Change
	groups  []group
	// loose is the group collecting blocks written without a message
	// around them, until the next message starts.
	loose *group
	ids   map[string]bool // block_ids used so far
}

// group is one message as the model wrote it, its blocks built; a message
// written as Markdown comes as converted messages instead.
type group struct {
	path      string
	blocks    []slack.Block
	converted []Message
}

func newRepairer() *repairer { return &repairer{ids: map[string]bool{}} }

func (r *repairer) note(path, kind, detail string) {
	r.changes = append(r.changes, Change{Path: path, Kind: kind, Detail: detail})
}

// read parses the raw messages value. Text that is not JSON at all comes
// back as a string (prose where JSON belongs); JSON that does not parse
// even after jsonish's repairs comes back as the strings it held.
func (r *repairer) read(raw json.RawMessage, path string) *jsonish.Value {
	t := strings.TrimSpace(string(raw))
	if t == "" {
		return nil
	}
	v, fixes, err := jsonish.Decode(t)
	if err == nil {
		r.noteFixes(path, fixes)
		return v
	}
	if !jsonish.LooksLikeJSON(t) {
		return jsonish.NewString(t)
	}
	return r.salvage(t, path, err)
}

// salvage keeps the strings of a payload that does not parse, as a message
// of mrkdwn text, and returns nil.
func (r *repairer) salvage(t, path string, err error) *jsonish.Value {
	r.add(path, r.salvaged(t, path, err))
	return nil
}

// salvaged returns the strings of broken JSON as sections of mrkdwn text.
func (r *repairer) salvaged(t, path string, err error) []slack.Block {
	if _, body, _, ok := jsonish.FindFence(t); ok {
		t = body
	}
	skip := func(k string) bool { return nonProseKeys[k] }
	strs := jsonish.Salvage([]byte(t), skip)
	if relaxed := jsonish.Salvage([]byte(jsonish.Relax(t)), skip); len(strings.Join(relaxed, "")) > len(strings.Join(strs, "")) {
		strs = relaxed // single-quoted near-JSON reads further once relaxed
	}
	r.note(path, "json_invalid", fmt.Sprintf("%v; kept %d text(s)", err, len(strs)))
	return r.textSections(strings.Join(strs, "\n\n"), path)
}

// noteFixes records the repairs jsonish made to read a value.
func (r *repairer) noteFixes(path string, fixes []jsonish.Fix) {
	for _, f := range fixes {
		switch f {
		case jsonish.Unfenced:
			r.note(path, "json_unfenced", "JSON inside a Markdown code fence")
		case jsonish.Relaxed:
			r.note(path, "json_relaxed", "single quotes, Python literals, unquoted keys or trailing commas rewritten as JSON")
		case jsonish.Unescaped:
			r.note(path, "json_unescaped", "quotes escaped once too often")
		}
	}
}

// run builds the answer from the messages value, or from the Markdown
// fallback when the messages hold no Block Kit.
func (r *repairer) run(v *jsonish.Value, path, fallback string) []Message {
	usable := len(words(fallback)) > 0
	switch {
	case isEmptyValue(v):
	case usable && !holdsBlockKit(v, 0):
		// Prose, a number or an object of no known shape where messages
		// belong, beside a real answer: the answer is report_content, and
		// the prose stays only when it says something report_content lacks.
		prose := strings.TrimSpace(readable(v))
		if v.Kind == jsonish.String {
			prose = strings.TrimSpace(v.Str)
		}
		detail := "messages hold no Block Kit (" + kindName(v) + "); answer built from report_content"
		if v.Kind != jsonish.Number && v.Kind != jsonish.Bool && !wordsWithin(prose, fallback) {
			r.groups = append(r.groups, group{path: path, converted: FromMarkdown(prose)})
			detail += ", after the messages' own words"
		}
		r.note(path, "fallback_used", detail)
		r.fallback(fallback)
		usable = false // used
	default:
		r.messages(v, path, 0)
		r.flush()
	}
	out := r.pack()
	if len(out) == 0 && usable {
		reason := "messages missing or empty"
		if !isEmptyValue(v) {
			reason = "nothing usable in messages"
		}
		r.note(path, "fallback_used", reason+"; answer built from report_content")
		r.fallback(fallback)
		out = r.pack()
	}
	if len(out) == 0 {
		r.note(path, "empty_answer", "no messages and no report_content")
		out = []Message{{
			Text:   emptyAnswerText,
			Blocks: []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "_"+emptyAnswerText+"_", false, false), nil, nil)},
		}}
	}
	return out
}

// fallback adds the answer in report_content: Markdown, or the Block Kit
// JSON a model sometimes puts there instead (whole or in a ``` fence).
func (r *repairer) fallback(content string) {
	const path = "report_content"
	if t := strings.TrimSpace(content); t != "" && strings.ContainsAny(t[:1], "[{`~") {
		if v, fixes, err := jsonish.Decode(t); err == nil && isBlockPayload(v) {
			r.note(path, "json_decoded", "report_content holds Block Kit JSON: read as messages")
			r.noteFixes(path, fixes)
			r.messages(v, path, 1)
			r.flush()
			return
		}
	}
	r.groups = append(r.groups, group{path: path, converted: FromMarkdown(content)})
}

// isEmptyValue reports whether v holds nothing: missing, null, "", [] or {}.
func isEmptyValue(v *jsonish.Value) bool {
	if v == nil {
		return true
	}
	switch v.Kind {
	case jsonish.Null:
		return true
	case jsonish.String:
		return strings.TrimSpace(v.Str) == ""
	case jsonish.Array, jsonish.Object:
		return len(v.Vals) == 0
	}
	return false
}

// blockKitKeys are keys only messages, blocks and text objects have.
var blockKitKeys = []string{"blocks", "attachments", "messages", "message", "type", "text", "fields", "elements", "accessory", "image_url", "rows"}

// holdsBlockKit reports whether v is something Repair reads as messages: a
// list, an object with a key of Block Kit, or a string holding either as
// JSON. Prose, numbers and objects of no known shape are not.
func holdsBlockKit(v *jsonish.Value, depth int) bool {
	switch v.Kind {
	case jsonish.Array:
		return true
	case jsonish.Object:
		for _, k := range blockKitKeys {
			if v.Has(k) {
				return true
			}
		}
	case jsonish.String:
		t := strings.TrimSpace(v.Str)
		if depth >= maxStringDepth {
			return false
		}
		if inner, _, err := jsonish.Decode(t); err == nil {
			return holdsBlockKit(inner, depth+1)
		}
		if _, body, _, ok := jsonish.FindFence(t); ok {
			inner, _, err := jsonish.Decode(body)
			return err == nil && holdsBlockKit(inner, depth+1)
		}
		return jsonish.LooksLikeJSON(t) // broken JSON: its words are salvaged
	}
	return false
}

func kindName(v *jsonish.Value) string {
	switch v.Kind {
	case jsonish.String:
		return "text"
	case jsonish.Number:
		return "a number"
	case jsonish.Bool:
		return "a boolean"
	case jsonish.Object:
		return "an object of no known shape"
	}
	return "nothing usable"
}

// words returns the lower-cased runs of letters and digits of s.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !isWordRune(r) })
}

// wordsWithin reports whether every word of s is also a word of in.
func wordsWithin(s, in string) bool {
	have := map[string]bool{}
	for _, w := range words(in) {
		have[w] = true
	}
	for _, w := range words(s) {
		if !have[w] {
			return false
		}
	}
	return true
}

// join extends a path with an object key.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// index extends a path with a list index.
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
