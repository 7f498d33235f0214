package attach_test

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/attach"
	"github.com/slackbot/slackbot/internal/testdoc"
)

// bombPDF writes a PDF whose first page shows first (no such page when "")
// and whose last page's Flate content stream is a few hundred kilobytes that
// inflate to inflated bytes: one string shown with Tj.
func bombPDF(t *testing.T, first string, inflated int) []byte {
	t.Helper()
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	_, _ = zw.Write([]byte("BT /F1 12 Tf 72 700 Td ("))
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	for n := 0; n < inflated; n += len(chunk) {
		_, _ = zw.Write(chunk)
	}
	_, _ = zw.Write([]byte(") Tj ET"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	bomb := testdoc.Page{Content: z.Bytes(), Flate: true}
	if first == "" {
		return testdoc.PDF(bomb)
	}
	return testdoc.PDF(testdoc.Text(first), bomb)
}

func TestAFlateBombInAPDFIsNotInflatedPastTheBudget(t *testing.T) {
	t.Parallel()
	data := bombPDF(t, "The real first page", 2*attach.MaxPDFInflated)
	if len(data) > 1<<20 {
		t.Fatalf("the bomb is %d bytes; it should be small", len(data))
	}
	text, err := attach.PDFText(data)
	if err != nil {
		t.Fatalf("PDFText: %v", err)
	}
	if !strings.Contains(text, "The real first page") || !strings.Contains(text, "the pages from page 2 on were not read") {
		t.Errorf("want the first page and a note that the rest was not read, got %.300q", text)
	}
	if len(text) > 4096 {
		t.Errorf("the text is %d bytes: the bomb was read", len(text))
	}
}

func TestAPDFWhoseFirstPageIsAFlateBombIsAnError(t *testing.T) {
	t.Parallel()
	text, err := attach.PDFText(bombPDF(t, "", 2*attach.MaxPDFInflated))
	if !errors.Is(err, attach.ErrPDFInflated) || len(text) != 0 {
		t.Fatalf("PDFText = %d bytes, %v; want ErrPDFInflated", len(text), err)
	}
}

// flatePDF writes a PDF of n pages, each a Flate content stream showing
// fifty lines of text.
func flatePDF(b *testing.B, n int) []byte {
	b.Helper()
	pages := make([]testdoc.Page, n)
	for i := range pages {
		var content strings.Builder
		content.WriteString("BT /F1 10 Tf 72 740 Td 12 TL\n")
		for l := range 50 {
			fmt.Fprintf(&content, "(Page %d line %d: the quarterly figures are in the appendix) ' \n", i+1, l+1)
		}
		content.WriteString("ET")
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		_, _ = zw.Write([]byte(content.String()))
		_ = zw.Close()
		pages[i] = testdoc.Page{Content: z.Bytes(), Flate: true}
	}
	return testdoc.PDF(pages...)
}

// BenchmarkPDFTextOfAHundredPages is the cost of reading an ordinary
// document, the inflation budget's first pass over each page included.
func BenchmarkPDFTextOfAHundredPages(b *testing.B) {
	data := flatePDF(b, 100)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		text, err := attach.PDFText(data)
		if err != nil || !strings.Contains(text, "Page 100 line 50") {
			b.Fatalf("PDFText: %v, %d bytes", err, len(text))
		}
	}
}
