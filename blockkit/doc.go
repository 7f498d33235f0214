// Package blockkit turns the Markdown a model writes into Slack messages:
// mrkdwn text (Mrkdwn), Block Kit messages within Slack's limits
// (FromMarkdown, SplitMrkdwn), and checks of any message against those limits
// (Validate, ValidateJSON). Repair and RepairReport fix the Block Kit a model
// wrote itself (see repair.go for its steps).
//
// Conversion walks goldmark's syntax tree (CommonMark with GitHub's tables,
// strikethrough, task lists and autolinks) instead of rewriting text with
// patterns, so code, links and emphasis are read the way a Markdown renderer
// reads them. Slack's own <…> tokens written by the model (<@U123>,
// <#C1|general>, <!here>, <https://x|label>, …) are recognised by the parser
// and copied byte for byte; everything else has &, < and > escaped.
//
// Where mrkdwn has no equivalent, this package chooses:
//
//   - Emphasis: **bold** → *bold*, *italic* → _italic_, ~~strike~~ → ~strike~.
//     A marker touching a letter or digit (CJK included) gets U+200B beside
//     it, or Slack would not see it; nested same-kind emphasis is written
//     once; markers are closed before and reopened after each line break.
//   - Literal *, _, ~ and ` (escaped, or unpaired, in Markdown) that Slack
//     could pair with a partner on the same line become look-alikes (∗ ＿ ∼
//     ‵): mrkdwn has no escapes, and U+200B is what makes Slack see a
//     marker. Intraword ones (snake_case), lone ones (2 * 3) and ones no
//     partner can close (~5 min, ~/path) stay as they are.
//   - A code span holding a backtick is written ```like`this```: single
//     backticks cannot hold one, and every byte of the code survives.
//   - Headings are bold lines in Mrkdwn and header blocks in FromMarkdown;
//     lists use • ◦ ▪ and keep their numbers; task items ☐ ☑; quotes keep >
//     on every line (nested quotes flatten, Slack has one level); rules are
//     a line of ─ in Mrkdwn and divider blocks in FromMarkdown; tables are
//     table blocks where Slack allows (see table.go) and aligned code blocks
//     otherwise, wrapped to 80 columns or, when even that cannot fit, a list
//     of their rows; images are links to the image; a link to an address a
//     Slack link cannot take (tel:, ftp:) is its label with the address
//     after it; raw HTML is shown as text, except <br> (a line break) and
//     comments (hidden).
//
// Every length is measured by Len, in UTF-16 code units (an emoji counts
// 2), so a text this package passes never exceeds a Slack limit however
// Slack counts its "characters"; see limits.go.
package blockkit
