package attach_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/attach"
)

func TestATwentyFiveMegabyteFileIsRefusedWithAClearMessage(t *testing.T) {
	t.Parallel()
	files := []attach.File{
		{ID: "F1", Name: "dump.tar", Size: 25 << 20},
		{ID: "F2", Name: "notes.txt", Size: 1200},
	}
	read, skipped := attach.Admit(files, 20<<20, 10)
	if len(read) != 1 || read[0].ID != "F2" {
		t.Fatalf("read %+v, want notes.txt only", read)
	}
	if len(skipped) != 1 || skipped[0].File.ID != "F1" {
		t.Fatalf("skipped %+v, want dump.tar", skipped)
	}
	if want := "dump.tar (25.0 MB) was not read: files over 20.0 MB are skipped."; skipped[0].Reason != want {
		t.Fatalf("reason %q, want %q", skipped[0].Reason, want)
	}
}

func TestFilesPastTheCountAreSkippedInOrder(t *testing.T) {
	t.Parallel()
	var files []attach.File
	for i := range 12 {
		files = append(files, attach.File{ID: fmt.Sprint(i), Name: fmt.Sprintf("f%d.txt", i), Size: 10})
	}
	read, skipped := attach.Admit(files, 20<<20, 10)
	if len(read) != 10 || read[9].ID != "9" || len(skipped) != 2 || skipped[0].File.ID != "10" {
		t.Fatalf("read %d (last %s), skipped %d; want the first 10 read, 10 and 11 skipped", len(read), read[len(read)-1].ID, len(skipped))
	}
	if !strings.Contains(skipped[0].Reason, "f10.txt was not read: I read at most 10 files of a message.") {
		t.Fatalf("reason %q", skipped[0].Reason)
	}
}

func TestAFileNameCannotBreakTheSentenceItIsIn(t *testing.T) {
	t.Parallel()
	_, skipped := attach.Admit([]attach.File{{Name: "a\nb<!channel>" + strings.Repeat("x", 200), Size: 30 << 20}}, 20<<20, 10)
	r := skipped[0].Reason
	if strings.Contains(r, "\n") || len([]rune(r)) > 160 {
		t.Fatalf("reason %q holds a line break or the whole 200-character name", r)
	}
}
