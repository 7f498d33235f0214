package attach

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/ledongthuc/pdf"
)

// ErrNoText is returned for a PDF without a text layer: a scan, or pages
// that are only pictures.
var ErrNoText = errors.New("the PDF has no text layer (it may be a scan); its pages are pictures only")

// MaxPDFPages bounds the pages read from one PDF.
const MaxPDFPages = 2000

// PDFText extracts the text of a PDF, page by page, each page after a
// "--- page N ---" line. A document the library cannot parse, or that
// makes it fail part-way (a malformed or hostile file), is an error, never
// a crash; so is an encrypted one.
func PDFText(data []byte) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("the PDF cannot be read: %v", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", fmt.Errorf("the PDF cannot be read: %w", err)
	}
	pages := r.NumPage()
	if pages <= 0 {
		return "", ErrNoText
	}
	var b strings.Builder
	found := false
	for i := 1; i <= min(pages, MaxPDFPages); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		// Fonts are named per page (two pages' F1 may differ), so each
		// page reads its own.
		t, err := p.GetPlainText(nil)
		if err != nil {
			return "", fmt.Errorf("the PDF cannot be read on page %d: %w", i, err)
		}
		fmt.Fprintf(&b, "--- page %d ---\n%s\n", i, strings.TrimSpace(t))
		if strings.TrimSpace(t) != "" {
			found = true
		}
	}
	if !found {
		return "", ErrNoText
	}
	if pages > MaxPDFPages {
		fmt.Fprintf(&b, "--- the last %d pages were not read ---\n", pages-MaxPDFPages)
	}
	return b.String(), nil
}
