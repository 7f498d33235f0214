package attach_test

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/attach"
)

// bombPDF writes a PDF whose first page shows first (no page when "") and
// whose last page's Flate content stream is a few hundred kilobytes that
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
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	b.WriteString("%PDF-1.4\n")
	kids := "6 0 R"
	if first != "" {
		kids = "4 0 R 6 0 R"
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids, strings.Count(kids, "R")))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << /Font << /F1 3 0 R >> >> >>")
	content := "BT /F1 12 Tf 72 700 Td (" + first + ") Tj ET"
	obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
	obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 7 0 R /Resources << /Font << /F1 3 0 R >> >> >>")
	offsets = append(offsets, b.Len())
	fmt.Fprintf(&b, "%d 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n", len(offsets), z.Len())
	b.Write(z.Bytes())
	b.WriteString("\nendstream\nendobj\n")
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
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
	var out bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, out.Len())
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	out.WriteString("%PDF-1.4\n")
	kids := make([]string, n)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	for i := range n {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources << /Font << /F1 3 0 R >> >> >>", 5+2*i))
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
		offsets = append(offsets, out.Len())
		fmt.Fprintf(&out, "%d 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n", len(offsets), z.Len())
		out.Write(z.Bytes())
		out.WriteString("\nendstream\nendobj\n")
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return out.Bytes()
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
