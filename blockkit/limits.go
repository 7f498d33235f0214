package blockkit

import "unicode/utf8"

// Block Kit limits this package converts, splits and validates against.
//
// Every character limit is counted in Unicode code points (Go runes), never in
// bytes: Slack documents its limits in "characters", and a 3-byte CJK rune must
// count once or valid non-Latin text would be cut short. Should Slack count
// UTF-16 units instead (as JavaScript does), only runes outside the Basic
// Multilingual Plane (most emoji) would count twice; the 100-character margin
// between SectionTextMax and Slack's 3000 absorbs that for sections. The
// entities &amp; &lt; &gt; count as the 5 or 4 characters they are on the wire.
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

// charCount counts characters the way Slack does (see the constants above).
func charCount(s string) int { return utf8.RuneCountInString(s) }
