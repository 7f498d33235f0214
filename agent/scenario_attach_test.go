package agent

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"regexp"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/slackbot/slackbot/attach"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/testdoc"
	"github.com/slackbot/slackbot/llm/llmtest"
)

var (
	attachmentHandle = regexp.MustCompile(`tool_output\(handle = "([0-9a-f-]{36})"`)
	readGrepHandle   = regexp.MustCompile(`Handle/filename: (\S+)`)
)

// handleOfPrompt is the handle a read-grep prompt names.
func handleOfPrompt(system string) string {
	if m := readGrepHandle.FindStringSubmatch(system); m != nil {
		return m[1]
	}
	return ""
}

func TestAFiveMegabyteLogBecomesAHandleAndReadGrepFindsTheLineInItsMiddle(t *testing.T) {
	t.Parallel()
	logText, needle := testdoc.FiveMegabyteLog()
	if mid := strings.Index(logText, needle); mid < len(logText)/3 || mid > 2*len(logText)/3 {
		t.Fatalf("the needle is at %d of %d bytes, not in the middle", mid, len(logText))
	}
	h := newHarness(t, withAgent(func(a *config.Agent) {
		a.ToolOutput = config.ToolOutput{MaxBytes: 12288, MaxChunksForFullMode: 1, OverlapPercent: 10}
	}))
	runDir := withToolOutput(t, h)
	core, logs := observer.New(zapcore.InfoLevel)
	h.runner.Log = zap.New(core)
	h.files = []attach.File{{ID: "F1", Name: "payments.log", Type: "text/plain", Size: int64(len(logText)), Data: []byte(logText)}}

	var mu sync.Mutex
	var grepResult, firstPrompt string
	h.srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if extractionKind(r) == "read-grep" {
			res := toolResults(r)
			if len(res) == 0 {
				return llmtest.Call("Grep", jsonArgs(map[string]any{"pattern": "ERROR", "path": handleOfPrompt(r.System)}))
			}
			mu.Lock()
			grepResult = res[len(res)-1].Content
			mu.Unlock()
			return llmtest.Call(FinalReportTool, jsonArgs(map[string]any{"status": "success", "report_format": "text",
				"report_content": "ERROR at 12:00: payment gateway timed out for order 4242."}))
		}
		last := toolResults(r)
		if len(last) == 0 {
			mu.Lock()
			firstPrompt = r.Messages[len(r.Messages)-1].Content
			mu.Unlock()
			handle := attachmentHandle.FindStringSubmatch(firstPrompt)
			if handle == nil {
				t.Errorf("no handle in the user's turn: %.500s", firstPrompt)
				return llmtest.Report(config.FormatMarkdown, "failure", "no handle")
			}
			return llmtest.Call(ToolOutputTool, jsonArgs(map[string]any{"handle": handle[1], "extract": "every ERROR line", "mode": "read-grep"}))
		}
		return llmtest.Report(config.FormatMarkdown, "success", "The payment gateway timed out for order 4242.")
	})
	res := h.run("Why did order 4242 fail?")
	wantReport(t, res, StatusSuccess, SourceToolCall)

	mu.Lock()
	defer mu.Unlock()
	if !strings.HasPrefix(firstPrompt, "Why did order 4242 fail?") || !strings.Contains(firstPrompt, "payments.log") || len(firstPrompt) > 4096 {
		t.Errorf("the user's turn should be the question and a short note naming payments.log, got %d bytes: %.300s", len(firstPrompt), firstPrompt)
	}
	if !strings.Contains(grepResult, needle) {
		t.Errorf("Grep answered %q, want the line from the middle of the log", grepResult)
	}
	if got := lastToolResult(t, h.srv.Last()); !strings.Contains(got, "STRATEGY:read-grep:\n\nERROR at 12:00") {
		t.Errorf("tool_output answered %q", got)
	}
	if left := sessionDirs(t, runDir); len(left) != 0 {
		t.Errorf("the stored log outlived the session: %v", left)
	}
	for _, e := range logs.All() {
		line := e.Message + fmt.Sprint(e.ContextMap())
		if strings.Contains(line, "payment gateway") || strings.Contains(line, "served in 12ms") {
			t.Errorf("a log line carries the file's content: %.300s", line)
		}
	}
	if logs.FilterMessage("attachment").Len() != 1 {
		t.Errorf("want one log line for the attachment, got %d", logs.FilterMessage("attachment").Len())
	}
}

func TestASessionsAttachedPictureReachesAVisionModelAndATextOnlyOneGetsTheNote(t *testing.T) {
	t.Parallel()
	png := tinyPNG(t)
	for _, tt := range []struct {
		name, model string
		images      int
		note        bool
	}{
		{"a Claude model sees it", "claude-sonnet-4-5", 1, false},
		{"an unknown model gets the note", testModel, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, overAnthropic(), script(llmtest.Report(config.FormatMarkdown, "success", "A red dot.")), withAgent(func(a *config.Agent) {
				a.Models = []string{"fake/" + tt.model}
			}))
			h.files = []attach.File{{ID: "F1", Name: "dot.png", Type: "image/png", Size: int64(len(png)), Data: png}}
			wantReport(t, h.run("What is this?"), StatusSuccess, SourceToolCall)
			r := h.requests()[0]
			user := r.Messages[len(r.Messages)-1]
			if len(user.Images) != tt.images {
				t.Fatalf("%d images on the wire, want %d", len(user.Images), tt.images)
			}
			if got := strings.Contains(user.Content, "cannot see: dot.png"); got != tt.note {
				t.Fatalf("note present %v, want %v: %q", got, tt.note, user.Content)
			}
			if !strings.HasPrefix(user.Content, "What is this?\n\n[Attached file dot.png: image/png") {
				t.Fatalf("the turn should be the question, then the file's line: %q", user.Content)
			}
		})
	}
}

// tinyPNG is a 2×2 PNG.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestAFallbackToATextOnlyModelGetsTheNoteInsteadOfThePicture(t *testing.T) {
	t.Parallel()
	png := tinyPNG(t)
	h := newHarness(t, overAnthropic(), script(llmtest.Reply{ErrorType: "overloaded_error"}, llmtest.Report(config.FormatMarkdown, "success", "Cannot see it.")),
		withAgent(func(a *config.Agent) { a.Models = []string{"fake/claude-sonnet-4-5", "fake/" + testModel} }))
	h.files = []attach.File{{Name: "dot.png", Data: png}}
	wantReport(t, h.run("What is this?"), StatusSuccess, SourceToolCall)
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the failed one and the fallback", len(reqs))
	}
	first, second := reqs[0].Messages[len(reqs[0].Messages)-1], reqs[1].Messages[len(reqs[1].Messages)-1]
	if len(first.Images) != 1 || len(second.Images) != 0 || !strings.Contains(second.Content, "cannot see: dot.png") {
		t.Fatalf("first attempt %d images, fallback %d images and %q; want the picture, then the note", len(first.Images), len(second.Images), second.Content)
	}
}
