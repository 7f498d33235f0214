package tooloutput

import (
	"bytes"
	"regexp/syntax"
	"strings"
)

// prefilter is a literal that every match of a pattern contains. Scanning
// for it with bytes.Index runs at memory speed, where the regexp engine
// runs at tens of megabytes a second; only lines holding it are matched.
type prefilter struct {
	lit  []byte
	fold bool // lit is lower case and is looked for in a lower-cased copy
}

// minPrefilter is the shortest literal worth scanning for.
const minPrefilter = 3

// newPrefilter finds a required literal of pattern, or returns nil.
func newPrefilter(pattern string) *prefilter {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	best := ""
	fold := false
	consider := func(n *syntax.Regexp) {
		if n.Op != syntax.OpLiteral {
			return
		}
		s := string(n.Rune)
		f := n.Flags&syntax.FoldCase != 0
		if f {
			s = foldSafe(s)
		}
		if strings.ContainsRune(s, '\n') || len(s) <= len(best) {
			return
		}
		best, fold = s, f
	}
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op == syntax.OpConcat {
		for _, sub := range re.Sub {
			for sub.Op == syntax.OpCapture {
				sub = sub.Sub[0]
			}
			consider(sub)
		}
	} else {
		consider(re)
	}
	if len(best) < minPrefilter {
		return nil
	}
	if fold {
		best = strings.ToLower(best)
	}
	return &prefilter{lit: []byte(best), fold: fold}
}

// foldSafe returns the longest run of s that ASCII lower-casing matches
// exactly as case folding does: ASCII letters other than k and s, which
// also fold to the Kelvin sign and the long s.
func foldSafe(s string) string {
	best, start := "", 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			c := s[i]
			if c < 0x80 && c != 'k' && c != 'K' && c != 's' && c != 'S' {
				continue
			}
		}
		if i-start > len(best) {
			best = s[start:i]
		}
		start = i + 1
	}
	return best
}

// lowerASCII writes src lower-cased (ASCII only, so offsets are kept) into
// dst's storage and returns it.
func lowerASCII(dst, src []byte) []byte {
	dst = append(dst[:0], src...)
	for i, c := range dst {
		if 'A' <= c && c <= 'Z' {
			dst[i] = c + 'a' - 'A'
		}
	}
	return dst
}

// next returns where the next candidate at or after pos starts in hay
// (the region, or its lower-cased copy), or -1.
func (p *prefilter) next(hay []byte, pos int) int {
	i := bytes.Index(hay[pos:], p.lit)
	if i < 0 {
		return -1
	}
	return pos + i
}
