package blockkit

import "unicode/utf8"

// Block Kit limits this package converts, splits and validates against.
//
// Every length limit is measured with Len, in UTF-16 code units: see Len.
const (
	// SectionTextMax is the product clamp for section text. Slack's hard limit
	// is 3000 (SlackSectionTextMax); converting to 2900 leaves room for the
	// markers a later repair may add without crossing Slack's limit.
	SectionTextMax = 2900
	// HeaderTextMax is Slack's limit for a header block's plain_text.
	HeaderTextMax = 150
	// ContextTextMax is the limit for each text element of a context block.
	ContextTextMax = 2000
	// FieldTextMax is Slack's limit for each section field.
	FieldTextMax = 2000
	// MaxBlocks is Slack's limit on blocks in one message.
	MaxBlocks = 50
	// MaxFields is Slack's limit on fields in one section.
	MaxFields = 10
	// MaxContextElements is Slack's limit on elements in one context block.
	MaxContextElements = 10
	// MaxMessageChars is the budget of combined block text per message before
	// FromMarkdown starts a new message: Slack answers msg_blocks_too_long near
	// 13,000 characters, and the budget keeps a margin below that.
	MaxMessageChars = 12000
	// TableMaxRows is Slack's limit on rows in a table block (header included).
	TableMaxRows = 100
	// TableMaxCells is Slack's limit on cells in one table row.
	TableMaxCells = 20
)

// Further limits that Slack enforces and this package checks.
const (
	// SlackSectionTextMax is Slack's hard limit for section text; Validate
	// enforces it, while the converters stay under SectionTextMax.
	SlackSectionTextMax = 3000
	// BlockIDMax is Slack's limit on a block_id.
	BlockIDMax = 255
	// TableMaxChars caps the characters across all cells of one table (and of
	// one message, which holds at most one table). Slack rejects larger tables
	// with invalid_blocks; bigger tables become aligned code blocks.
	TableMaxChars = 10000
	// MarkdownBlockMax is Slack's limit across all markdown blocks of a message.
	MarkdownBlockMax = 12000
	// MessageTextMax is the length past which Slack truncates a message's text.
	MessageTextMax = 40000
)

// Len is the length of s as this package measures it against Slack's limits,
// in UTF-16 code units: a character outside the Basic Multilingual Plane (most
// emoji, some CJK) counts 2, every other character 1, and the entities &amp;
// &lt; &gt; count as the 5 or 4 characters they are on the wire.
//
// Slack documents its limits in "characters" without saying which unit, and
// JavaScript, where its clients and Block Kit Builder measure text, counts
// UTF-16 units. A UTF-16 count is never below the count of code points, so
// text within a limit by Len is within it under either reading; bytes would
// cut valid non-Latin text short. Every conversion, split, clamp, repair and
// Validate uses Len, so they cannot disagree about a length.
func Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n++
		if r > 0xFFFF {
			n++
		}
		i += size
	}
	return n
}

// runeLen is the Len of one rune.
func runeLen(r rune) int {
	if r > 0xFFFF {
		return 2
	}
	return 1
}

// prefixWithin returns the end (a byte offset) of the longest prefix of s
// whose Len is at most max, never inside a rune.
func prefixWithin(s string, max int) int {
	n := 0
	for i, r := range s {
		if n += runeLen(r); n > max {
			return i
		}
	}
	return len(s)
}
