package attach_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/attach"
)

func TestAGeneratedPDFsTextComesOutPageByPage(t *testing.T) {
	t.Parallel()
	text, err := attach.PDFText(buildPDF("Quarterly revenue grew 12 percent", "Churn fell to 2 percent"))
	if err != nil {
		t.Fatalf("PDFText: %v", err)
	}
	for _, want := range []string{"--- page 1 ---", "Quarterly revenue grew 12 percent", "--- page 2 ---", "Churn fell to 2 percent"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "Quarterly") > strings.Index(text, "Churn") {
		t.Errorf("pages out of order:\n%s", text)
	}
}

func TestAScannedPDFWithoutTextSaysSo(t *testing.T) {
	t.Parallel()
	_, err := attach.PDFText(buildPDF("", ""))
	if !errors.Is(err, attach.ErrNoText) || !strings.Contains(err.Error(), "scan") {
		t.Fatalf("err = %v, want ErrNoText saying it may be a scan", err)
	}
}

func TestAMalformedPDFIsAnErrorNotACrash(t *testing.T) {
	t.Parallel()
	good := string(buildPDF("hello"))
	for name, data := range map[string]string{
		"only a header": "%PDF-1.7\n",
		"cut in half":   good[:len(good)/2],
		"a bad xref":    "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 9 0 R >> endobj\nxref\n0 1\nzzzz\ntrailer << /Root 1 0 R >>\nstartxref\n9\n%%EOF",
		// Kids and Parent pointing back up: the library alone follows
		// such a tree forever.
		"a page tree loop": strings.Replace(good, "/Kids [4 0 R]", "/Kids [2 0 R]", 1),
		"a page its own parent, without resources": strings.Replace(good,
			"/Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << /Font << /F1 3 0 R >> >>", "/Parent 4 0 R /Contents 5 0 R", 1),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if data == good {
				t.Fatal("the test's edit did not apply")
			}
			text, err := attach.PDFText([]byte(data))
			if err == nil {
				t.Fatalf("a malformed PDF read as %q", text)
			}
			if !strings.Contains(err.Error(), "PDF") {
				t.Fatalf("err = %v, want one that says the PDF cannot be read", err)
			}
		})
	}
}
