package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/blockkit"
)

// renderRun runs "slackbot render" in-process.
func renderRun(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = runRender(args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

// decodeRendered parses stdout as the JSON array render prints and checks
// every message the way Slack would.
func decodeRendered(t *testing.T, stdout string) []json.RawMessage {
	t.Helper()
	var msgs []json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &msgs); err != nil {
		t.Fatalf("stdout is not a JSON array: %v\n%s", err, stdout)
	}
	for i, m := range msgs {
		if err := blockkit.ValidateJSON(m); err != nil {
			t.Errorf("message %d is not valid Block Kit: %v\n%s", i, err, m)
		}
	}
	return msgs
}

func TestRenderMarkdownPrintsValidMessages(t *testing.T) {
	t.Parallel()
	stdout, stderr, err := renderRun(t, "# Deploy\n\nRun **make deploy** & see [the docs](https://example.com/d).\n")
	if err != nil {
		t.Fatalf("render: %v (stderr %q)", err, stderr)
	}
	if stderr != "" {
		t.Errorf("markdown input wrote to stderr: %q", stderr)
	}
	msgs := decodeRendered(t, stdout)
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1:\n%s", len(msgs), stdout)
	}
	for _, want := range []string{`"text":`, `"blocks": [`, "*make deploy*", "&amp;", "<https://example.com/d|the docs>"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stdout, "\n  {") {
		t.Errorf("stdout is not indented:\n%s", stdout)
	}
}

func TestRenderEmptyMarkdownPrintsEmptyArray(t *testing.T) {
	t.Parallel()
	stdout, _, err := renderRun(t, "", "--input", "markdown")
	if err != nil {
		t.Fatal(err)
	}
	if stdout != "[]\n" {
		t.Errorf("stdout = %q, want %q", stdout, "[]\n")
	}
}

func TestRenderReportRepairsAndListsChanges(t *testing.T) {
	t.Parallel()
	report := `{"status":"success","report_format":"slack-block-kit","messages":[{"blocks":[
		{"type":"section","text":"Deploy **finished** in [CI](https://ci.example.com/1)"},
		{"type":"header","text":{"type":"mrkdwn","text":"*Result*"}}]}]}`
	stdout, stderr, err := renderRun(t, report, "--input", "report")
	if err != nil {
		t.Fatalf("render: %v (stderr %q)", err, stderr)
	}
	msgs := decodeRendered(t, stdout)
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1", len(msgs))
	}
	if !strings.Contains(stdout, "Deploy *finished* in <https://ci.example.com/1|CI>") {
		t.Errorf("Markdown was not repaired:\n%s", stdout)
	}
	wantLines := []string{
		"repair: messages[0].blocks[0].text: text_wrapped: string wrapped in a mrkdwn text object",
		"repair: messages[0].blocks[0].text: markdown_converted: Markdown converted to mrkdwn",
		"repair: messages[0].blocks[1].text: text_type_fixed: mrkdwn where only plain_text is allowed",
	}
	got := strings.Split(strings.TrimSpace(stderr), "\n")
	if strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("stderr changes:\n%s\nwant:\n%s", stderr, strings.Join(wantLines, "\n"))
	}
}

func TestRenderReportFallsBackToReportContent(t *testing.T) {
	t.Parallel()
	stdout, stderr, err := renderRun(t, `{"status":"success","messages":[],"report_content":"All **good**."}`, "--input", "report")
	if err != nil {
		t.Fatal(err)
	}
	decodeRendered(t, stdout)
	if !strings.Contains(stdout, "All *good*.") {
		t.Errorf("report_content not used:\n%s", stdout)
	}
	if !strings.Contains(stderr, "repair: messages: fallback_used:") {
		t.Errorf("fallback not reported on stderr: %q", stderr)
	}
}

func TestRenderBuilderURLGoesToStderrAndDecodesToTheBlocks(t *testing.T) {
	t.Parallel()
	stdout, stderr, err := renderRun(t, "Hello *world* & friends, 100% sure+certain #1\n", "--builder-url")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(stdout), &msgs); err != nil {
		t.Fatalf("stdout is not JSON (the link must go to stderr): %v", err)
	}
	const prefix = "builder: 1/1: https://app.slack.com/block-kit-builder/#"
	line := strings.TrimSpace(stderr)
	if !strings.HasPrefix(line, prefix) || strings.Contains(line, "\n") {
		t.Fatalf("stderr = %q, want one line starting %q", stderr, prefix)
	}
	frag := strings.TrimPrefix(line, prefix)
	if strings.ContainsAny(frag, " \"{}<>") {
		t.Errorf("fragment is not URL-escaped: %q", frag)
	}
	payload, err := url.PathUnescape(frag)
	if err != nil {
		t.Fatalf("fragment does not unescape: %v", err)
	}
	var got struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(payload), &got); err != nil {
		t.Fatalf("fragment is not a JSON object: %v\n%s", err, payload)
	}
	var a, b any
	_ = json.Unmarshal(got.Blocks, &a)
	_ = json.Unmarshal(msgs[0].Blocks, &b)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Errorf("builder blocks differ from stdout blocks:\n%s\n%s", ja, jb)
	}
}

func TestRenderRejectsBadFlag(t *testing.T) {
	t.Parallel()
	_, stderr, err := renderRun(t, "x", "--nope")
	if !errors.Is(err, errUsage) {
		t.Fatalf("err = %v, want a usage error", err)
	}
	if !strings.Contains(stderr, "flag provided but not defined: -nope") || !strings.Contains(stderr, "usage: slackbot render") {
		t.Errorf("stderr does not explain the bad flag:\n%s", stderr)
	}
}

func TestRenderRejectsUnknownInputKind(t *testing.T) {
	t.Parallel()
	_, stderr, err := renderRun(t, "x", "--input", "html")
	if !errors.Is(err, errUsage) {
		t.Fatalf("err = %v, want a usage error", err)
	}
	if !strings.Contains(stderr, `--input must be markdown or report, not "html"`) {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestRenderRejectsPositionalArgument(t *testing.T) {
	t.Parallel()
	_, stderr, err := renderRun(t, "x", "answer.md")
	if !errors.Is(err, errUsage) || !strings.Contains(stderr, `unexpected argument "answer.md"`) {
		t.Fatalf("err = %v, stderr = %q", err, stderr)
	}
}

func TestRenderReportWithBadJSONSaysWhatItNeeds(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"messages": [`, `[{"blocks": []}]`, `"just a string"`, ``} {
		stdout, _, err := renderRun(t, in, "--input", "report")
		if err == nil {
			t.Errorf("input %q: no error", in)
			continue
		}
		if !errors.Is(err, blockkit.ErrNotObject) || !strings.Contains(err.Error(), "--input report needs the JSON object of a final_report call's arguments") {
			t.Errorf("input %q: unclear error %q", in, err)
		}
		if stdout != "" {
			t.Errorf("input %q: printed %q despite the error", in, stdout)
		}
	}
}

func TestRenderHelpPrintsUsage(t *testing.T) {
	t.Parallel()
	_, stderr, err := renderRun(t, "", "-h")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "--builder-url") || !strings.Contains(stderr, "--input report") {
		t.Errorf("usage lacks the flags:\n%s", stderr)
	}
}

func TestUnescapeHTMLKeepsEscapedBackslashes(t *testing.T) {
	t.Parallel()
	in := `{"t":"a\\u003cb \u003c \u0026amp; \u003e \"q\" \n"}`
	want := `{"t":"a\\u003cb < &amp; > \"q\" \n"}`
	got := string(unescapeHTML([]byte(in)))
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	var a, b any
	if json.Unmarshal([]byte(in), &a) != nil || json.Unmarshal([]byte(got), &b) != nil || a.(map[string]any)["t"] != b.(map[string]any)["t"] {
		t.Fatalf("unescaping changed the decoded value: %v vs %v", a, b)
	}
}

func TestRenderHTMLPrintsAStandalonePage(t *testing.T) {
	t.Parallel()
	md := "# Plan\n\nUse **care** <script>alert(1)</script>.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\nx\n```\n"
	stdout, stderr, err := renderRun(t, md, "--html")
	if err != nil {
		t.Fatalf("render --html: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"<!DOCTYPE html>\n<html lang=\"en\">",
		`<meta charset="utf-8">`,
		"<style>",
		".bk-message{",
		`<div class="bk-message"><div class="bk-header">Plan</div>`,
		`Use <b>care</b> &lt;script&gt;alert(1)&lt;/script&gt;.`,
		`<table class="bk-table">`,
		`<pre class="bk-pre">x</pre>`,
		"</body>\n</html>\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("missing %q in\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "<script") {
		t.Errorf("a script tag from the answer is live:\n%s", stdout)
	}
	if strings.HasPrefix(strings.TrimSpace(stdout), "[") {
		t.Errorf("--html printed JSON:\n%s", stdout)
	}
}

func TestRenderHTMLDrawsAReportWithOneMessageDivEach(t *testing.T) {
	t.Parallel()
	report := `{"status":"success","report_format":"slack-block-kit","messages":[
		{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"first"}}]},
		{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"second"}}]}]}`
	stdout, stderr, err := renderRun(t, report, "--input", "report", "--html")
	if err != nil {
		t.Fatalf("render --input report --html: %v\n%s", err, stderr)
	}
	if n := strings.Count(stdout, `<div class="bk-message">`); n != 2 {
		t.Errorf("%d message divs, want 2:\n%s", n, stdout)
	}
}

func TestRenderHTMLOfEmptyMarkdownIsAnEmptyPage(t *testing.T) {
	t.Parallel()
	stdout, _, err := renderRun(t, "", "--html")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "<body>\n</body>") {
		t.Errorf("want an empty body:\n%s", stdout)
	}
}
