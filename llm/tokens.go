package llm

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// Token counts without a provider: an exact o200k count (CountTokens) and a
// one-pass estimate that allocates nothing (EstimateTokens), for budgets
// that must be checked often or over large texts.

// EstimateMargin bounds how far estimateTokens can fall short of o200k's
// count. Measured on code, Markdown, prose in six scripts, JSON, logs, CSV,
// URLs, UUIDs, hex, emoji and random base64: the worst text (random base64)
// had 1.25 times the estimated tokens, and every other kind had fewer than
// estimated. The agent package tests the margin (TestTheEstimateStaysWithinItsMargin).
const EstimateMargin = 1.3

var (
	codecOnce sync.Once
	codec     tokenizer.Codec
)

func tokenCodec() tokenizer.Codec {
	codecOnce.Do(func() {
		c, err := tokenizer.Get(tokenizer.O200kBase)
		if err == nil {
			codec = c
		}
	})
	return codec
}

// CountTokens counts the tokens of s with o200k; without a codec it falls
// back to the estimate raised by its margin.
func CountTokens(s string) int {
	if s == "" {
		return 0
	}
	if c := tokenCodec(); c != nil {
		if n, err := c.Count(s); err == nil {
			return n
		}
	}
	return int(float64(EstimateTokens(s))*EstimateMargin) + 1
}

// EstimateTokens guesses o200k's token count of s in one pass without
// allocating. It mirrors how BPE vocabularies split text: a word of letters
// is one token plus one per further six letters and per lower-to-upper
// case change (camelCase, base64), digits go in threes, runs of spaces in
// eights, other ASCII symbols count one each, words of other alphabets one
// token per three letters, other characters (CJK) one each and emoji two.
func EstimateTokens(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isASCIILetter(c):
			j, shifts := i+1, 0
			for j < len(s) && isASCIILetter(s[j]) {
				if s[j] <= 'Z' && s[j-1] >= 'a' {
					shifts++
				}
				j++
			}
			n += 1 + (j-i-1)/6 + shifts
			i = j
		case c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			n += (j - i + 2) / 3
			i = j
		case c == ' ' || c == '\t':
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			if j-i > 1 { // a single space joins the next word's token
				n += (j - i + 7) / 8
			}
			i = j
		case c == '\n' || c == '\r':
			n++
			for i++; i < len(s) && (s[i] == '\n' || s[i] == '\r'); i++ {
			}
		case c < utf8.RuneSelf:
			n++
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r >= 0x1F000: // emoji and other astral symbols
				n += 2
			case r < 0x2E80 && unicode.IsLetter(r): // Latin, Greek, Cyrillic, Arabic, …: words
				j, letters := i+size, 1
				for j < len(s) && s[j] >= utf8.RuneSelf {
					r2, size2 := utf8.DecodeRuneInString(s[j:])
					if r2 >= 0x2E80 || !unicode.IsLetter(r2) {
						break
					}
					letters++
					j += size2
				}
				n += 1 + (letters-1)/3
				size = j - i
			default: // CJK, symbols
				n++
			}
			i += size
		}
	}
	return n
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
