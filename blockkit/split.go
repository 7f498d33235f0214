package blockkit

import (
	"strings"
	"unicode/utf8"
)

// SplitMrkdwn splits mrkdwn text into pieces of at most max units (see Len),
// so each fits one text object. It cuts at a paragraph break where one falls
// in the second half of the allowance, else at a line break, else between
// words, and only then anywhere; a cut never falls inside an &entity;, a <…>
// link or mention token, or an inline `code` span. A token too long to fit a
// piece at all is written as the text it reads as (a link as its label and
// its address) and split as text: a cut inside it would leave a broken token.
// A ``` block that has to be cut is closed at the end of one piece and
// reopened at the start of the next, at a line break of the code where
// possible, so every piece renders on its own. Only whitespace at the cuts is
// dropped: the pieces together hold every word of text. An emphasis run a
// cut splits is closed before it and opened again after it. Text already within
// max comes back as the only piece; empty text gives none. A max below 16
// leaves no room for structure, and text is then cut every max units.
func SplitMrkdwn(text string, max int) []string {
	if text == "" {
		return nil
	}
	if max < 1 {
		max = 1
	}
	if Len(text) <= max {
		return []string{text}
	}
	if max < 16 {
		return chunkUnits(flattenTokens(text, 0), max)
	}
	limit := max
	if strings.Contains(text, "```") {
		limit -= len("```\n\n```") // the fences a piece inside code adds
	}
	text = flattenTokens(text, limit)
	var pieces []string
	reopen := false // the piece starts inside a code block: prefix "```\n"
	for i := 0; i < len(text); {
		prefix := ""
		if reopen {
			prefix = "```\n"
		}
		c, done := findCut(text, i, max-len(prefix), reopen)
		if done {
			if last := strings.TrimRight(prefix+text[i:], " \n"); strings.TrimSpace(last) != "" && last != "```" {
				pieces = append(pieces, last)
			}
			break
		}
		if c.code {
			pieces = append(pieces, prefix+text[i:c.pos]+"\n```")
		} else if piece := strings.TrimRight(prefix+text[i:c.pos], " \n"); strings.TrimSpace(piece) != "" {
			pieces = append(pieces, piece)
		}
		i, reopen = c.pos, c.code
		switch {
		case c.kind >= cutLine && c.code:
			i++ // the newline the closing fence replaced
		case c.kind >= cutLine:
			for i < len(text) && text[i] == '\n' {
				i++
			}
		case c.kind == cutWord:
			for i < len(text) && text[i] == ' ' {
				i++
			}
		}
	}
	return balanceEmphasis(pieces, max)
}

// Kinds of cut, worst first. A word cut inside code (cutCodeWord) inserts a
// line break into the code, so it comes after every other kind of boundary.
const (
	cutHard = iota
	cutCodeWord
	cutWord
	cutLine
	cutPara
)

// cut is a place to end a piece: before text[pos], after runes units of it.
// code means it is inside a ``` block, which the piece must close.
type cut struct {
	pos, runes, kind int
	code             bool
}

// findCut scans text from start for the best cut within budget units, or
// reports that the rest fits. inCode says whether start is inside a ``` block.
func findCut(text string, start, budget int, inCode bool) (cut, bool) {
	var best [cutPara + 1]cut // by kind; pos 0 means none
	record := func(kind, pos, runes int, code bool) {
		if pos <= start || (code && runes+4 > budget) {
			return
		}
		best[kind] = cut{pos: pos, runes: runes, kind: kind, code: code}
	}
	inSpan := false // inside `inline code`
	codeStart := start
	runes := 0
	j := start
	for j < len(text) {
		c := text[j]
		// Inside code, a cut right after the opening fence or right before
		// the closing one would leave an empty block on one side.
		codeEdge := inCode && (j <= codeStart || c == '\n' && strings.HasPrefix(text[j+1:], "```"))
		if !codeEdge && (!inSpan || c == '\n') {
			record(cutHard, j, runes, inCode)
		}
		switch {
		case c == '\n' && !codeEdge:
			record(cutLine, j, runes, inCode)
			if j+1 < len(text) && text[j+1] == '\n' {
				record(cutPara, j, runes, inCode)
			}
		case c == ' ' && !inSpan && inCode:
			record(cutCodeWord, j, runes, inCode)
		case c == ' ' && !inSpan:
			record(cutWord, j, runes, inCode)
		}
		if runes >= budget {
			break
		}
		width := 1 // units the next atom takes
		next := j + 1
		switch {
		case c == '`' && strings.HasPrefix(text[j:], "```"):
			next, width = j+3, 3
			for next < len(text) && text[next] == '`' {
				next, width = next+1, width+1
			}
			inCode, inSpan = !inCode, false
			codeStart = next
		case c == '`' && !inCode:
			inSpan = !inSpan
		case c == '\n':
			inSpan = false
		case c == '<':
			// Slack reads tokens inside code too.
			if k := tokenEnd(text, j); k > 0 {
				next, width = k, Len(text[j:k])
			}
		case c == '&':
			if k := entityEnd(text, j); k > 0 {
				next, width = k, k-j
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(text[j:])
			next, width = j+size, runeLen(r)
		}
		if runes+width > budget {
			break
		}
		runes += width
		j = next
	}
	if j >= len(text) {
		return cut{}, true
	}
	for _, kind := range []int{cutPara, cutLine, cutWord} {
		if best[kind].pos > 0 && best[kind].runes >= budget/2 {
			return best[kind], false
		}
	}
	pick := best[cutPara]
	if best[cutLine].pos > pick.pos {
		pick = best[cutLine]
	}
	for _, kind := range []int{cutWord, cutCodeWord, cutHard} {
		if pick.pos == 0 {
			pick = best[kind]
		}
	}
	if pick.pos > 0 {
		return pick, false
	}
	// One atom (a huge token) is over the budget on its own: cut inside it.
	limit := budget
	if inCode {
		limit -= 4 // room to close the code block
	}
	pos := start + prefixWithin(text[start:], limit)
	if pos == start {
		_, size := utf8.DecodeRuneInString(text[start:])
		pos += size
	}
	return cut{pos: pos, kind: cutHard, code: inCode}, false
}

// tokenEnd returns the index just past the <…> token starting at text[j], or
// 0 if the < opens none (our mrkdwn escapes every literal <, so in practice
// every < starts a token).
func tokenEnd(text string, j int) int {
	for k := j + 1; k < len(text); k++ {
		switch text[k] {
		case '>':
			return k + 1
		case '<', '\n':
			return 0
		}
	}
	return 0
}

// entityEnd returns the index just past the entity starting at text[j], or 0.
func entityEnd(text string, j int) int {
	for k := j + 1; k < len(text) && k < j+12; k++ {
		c := text[k]
		if c == ';' {
			if k > j+1 {
				return k + 1
			}
			return 0
		}
		if !(c == '#' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return 0
		}
	}
	return 0
}

// chunkUnits cuts text every max units.
func chunkUnits(text string, max int) []string {
	var pieces []string
	for len(text) > 0 {
		end := prefixWithin(text, max)
		if end == 0 {
			_, end = utf8.DecodeRuneInString(text)
		}
		pieces = append(pieces, text[:end])
		text = text[end:]
	}
	return pieces
}

// flattenTokens rewrites each <…> token in text longer than max units as
// the text it reads as: a link as "label (address)", or its address alone,
// anything else as readableToken shows it. The address keeps its escapes
// (&amp;), so the result is still valid mrkdwn.
func flattenTokens(text string, max int) string {
	if strings.IndexByte(text, '<') < 0 || len(text) <= max {
		return text
	}
	var b strings.Builder
	last := 0
	for j := strings.IndexByte(text, '<'); j >= 0 && j < len(text); {
		k := tokenEnd(text, j)
		if k == 0 {
			j++
		} else if Len(text[j:k]) <= max {
			j = k
		} else {
			b.WriteString(text[last:j])
			b.WriteString(tokenText(text[j+1 : k-1]))
			last, j = k, k
		}
		next := strings.IndexByte(text[j:], '<')
		if next < 0 {
			break
		}
		j += next
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// tokenText is the body of a <…> token written as plain mrkdwn text.
func tokenText(body string) string {
	head, label, hasLabel := strings.Cut(body, "|")
	if strings.HasPrefix(head, "@") || strings.HasPrefix(head, "#") || strings.HasPrefix(head, "!") {
		return readableToken(body)
	}
	if !hasLabel || label == head {
		return head
	}
	return label + " (" + head + ")"
}
