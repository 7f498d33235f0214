package slack

import (
	"strings"
	"testing"
	"time"
)

func TestSlowedRefreshesSayHowOftenTheProgressMessageIsUpdated(t *testing.T) {
	t.Parallel()
	if s := slowed(2*time.Second, 2*time.Second); s != "" {
		t.Errorf("unslowed refreshes say %q", s)
	}
	if s := slowed(2*time.Second, 20*time.Second); s != "busy: updates every 20 s" {
		t.Errorf("slowed refreshes say %q", s)
	}
	p := newProgress(&Bot{}, request{channel: "C1"}, "s1")
	p.busy = "busy: updates every 20 s"
	if text := blockText(p.render("")); !strings.Contains(text, "busy: updates every 20 s") {
		t.Errorf("the progress message does not say it is slowed:\n%s", text)
	}
}
