package llm

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryAfterParsing(t *testing.T) {
	t.Parallel()
	// Header parsing edge cases that a server script cannot easily reach.
	for _, v := range []string{"", "0", "-3", "soon", "Wed, 21 Oct 2015 07:28:00 GMT"} {
		h := map[string][]string{"Retry-After": {v}}
		if d := RetryAfter(h); d != 0 {
			t.Errorf("Retry-After %q = %v, want 0", v, d)
		}
	}
	h := http.Header{}
	h.Set("Retry-After-Ms", "250")
	h.Set("Retry-After", "7")
	if d := RetryAfter(h); d != 250*time.Millisecond {
		t.Errorf("retry-after-ms should win: %v", d)
	}
	h.Del("Retry-After-Ms")
	if d := RetryAfter(h); d != 7*time.Second {
		t.Errorf("Retry-After 7 = %v", d)
	}
}

func TestRedactRemovesKeysAndBoundsLength(t *testing.T) {
	t.Parallel()
	got := Redact("  bad key my-secret-key-1234, also sk-ant-api03-XYZ123abc and sk-or-****abcd  ", "my-secret-key-1234")
	if want := "bad key [redacted], also sk-ant-[redacted] and sk-or-[redacted]"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	long := Redact(strings.Repeat("é", MaxMessage), "")
	if len(long) > MaxMessage+len("…") || !strings.HasSuffix(long, "…") || strings.ContainsRune(long, '\uFFFD') {
		t.Fatalf("not bounded on a rune boundary: %d bytes", len(long))
	}
	err := RedactedError("safe text", io.ErrUnexpectedEOF)
	if err.Error() != "safe text" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("RedactedError = %v, unwraps to cause: %v", err, errors.Is(err, io.ErrUnexpectedEOF))
	}
}
