package attach

import (
	"errors"
	"fmt"
	"io"

	"github.com/ledongthuc/pdf"
)

// MaxPDFInflated bounds what the pages read of one PDF may inflate to: their
// content streams and their fonts' ToUnicode maps, together. A few
// kilobytes of Flate can inflate to gigabytes (a Flate bomb), and the
// library reads whatever a stream inflates to, so each page's streams are
// first inflated here, into nothing, against what is left of the budget;
// the page that would go over it, and every page after, are not read.
// Reading and parsing are both linear in the bytes inflated, so the budget
// bounds time as well as memory.
const MaxPDFInflated = 64 << 20

// ErrPDFInflated is returned for a PDF whose first page already inflates
// past MaxPDFInflated.
var ErrPDFInflated = fmt.Errorf("the PDF cannot be read: its first page inflates to more than %s", FormatSize(MaxPDFInflated))

// errOverBudget ends the measure of a page over the budget.
var errOverBudget = errors.New("over the budget")

// inflate measures what page p's streams inflate to, at most left bytes,
// and returns what is left, or errOverBudget.
func inflate(p pdf.Page, left int64) (int64, error) {
	var streams []pdf.Value
	contents := p.V.Key("Contents")
	if contents.Kind() == pdf.Array {
		for i := range contents.Len() {
			streams = append(streams, contents.Index(i))
		}
	} else {
		streams = append(streams, contents)
	}
	fonts := p.Resources().Key("Font")
	for _, name := range fonts.Keys() {
		streams = append(streams, fonts.Key(name).Key("ToUnicode"))
	}
	for _, s := range streams {
		if s.Kind() != pdf.Stream {
			continue
		}
		n, _ := io.Copy(io.Discard, io.LimitReader(s.Reader(), left+1))
		left -= n
		if left < 0 {
			return 0, errOverBudget
		}
	}
	return left, nil
}
