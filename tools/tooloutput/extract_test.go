package tooloutput

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// smallModel is a policy whose chunks hold a few thousand tokens, so tests
// reach several chunks with small documents.
var smallModel = Policy{ContextWindow: 4000, MaxOutputTokens: 500}

// lines makes n numbered lines of about width bytes.
func lines(n, width int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		l := fmt.Sprintf("line %d: ", i)
		b.WriteString(l + strings.Repeat("x", max(width-len(l), 0)) + "\n")
	}
	return b.String()
}

func TestAutoRoutesByShapeAndSize(t *testing.T) {
	t.Parallel()
	jsonLine := `{"items":[` + strings.Repeat(`{"id":12345,"name":"widget","tags":["a","b"]},`, 5000) + `{}]}`
	for _, tc := range []struct {
		name    string
		content string
		want    Mode
	}{
		{"a huge single-line JSON goes to full-chunked", jsonLine, ModeFullChunked},
		{"multi-line text over the chunk budget goes to read-grep", lines(2000, 60), ModeReadGrep},
		{"multi-line text that fits one chunk goes to full-chunked", lines(40, 60), ModeFullChunked},
		{"lines averaging over 1000 bytes go to full-chunked", lines(50, 1500), ModeFullChunked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newStore(t)
			e := put(t, s, "t__x", "{}", tc.content)
			m := &scripted{answer: func(system, _ string) (string, error) { return wrap(system, "the answer"), nil }}
			sub := func(_ context.Context, system, _ string, _ tools.Provider) (string, bool, error) {
				return wrap(system, "the answer"), false, nil
			}
			x := &Extractor{Policy: smallModel, Model: m.model, SubAgent: sub}
			out := x.Extract(context.Background(), Request{Store: s, Handle: e.Handle, Extract: "the ids"})
			if out.Tried != tc.want || out.Mode != tc.want || !out.OK {
				t.Fatalf("tried %s, used %s (ok %v), want %s: %s", out.Tried, out.Mode, out.OK, tc.want, out.Text)
			}
			want := "ABSTRACT FROM TOOL OUTPUT t__x WITH HANDLE " + e.Handle + ", STRATEGY:" + string(tc.want) + ":\n\nthe answer"
			if out.Text != want {
				t.Errorf("text %q, want %q", out.Text, want)
			}
		})
	}
}

func TestFullChunkedMapsEachChunkAndReducesOnce(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	doc := lines(1500, 70)
	e := put(t, s, "db__query", `{"sql":"select *"}`, doc)
	var inFlight, most atomic.Int32
	m := &scripted{answer: func(system, user string) (string, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for o := most.Load(); n > o && !most.CompareAndSwap(o, n); o = most.Load() {
		}
		if strings.Contains(system, "CHUNK OUTPUTS") {
			return wrap(system, "ids 7 and 1400"), nil
		}
		return wrap(system, "some ids"), nil
	}}
	p := smallModel
	p.MapConcurrency = 2
	x := &Extractor{Policy: p, Model: m.model}
	out := x.Extract(context.Background(), Request{Store: s, Handle: e.Handle, Extract: "the ids", Mode: ModeFullChunked})
	if !out.OK || out.Mode != ModeFullChunked || out.FellBack {
		t.Fatalf("outcome %+v", out)
	}
	if !strings.HasSuffix(out.Text, "\n\nids 7 and 1400") {
		t.Errorf("text %q is not the reduce answer", out.Text)
	}
	n := len(m.maps)
	if n < 3 || len(m.reduces) != 1 || out.Calls != n+1 {
		t.Fatalf("%d map calls, %d reduce calls, %d counted", n, len(m.reduces), out.Calls)
	}
	if most.Load() > 2 {
		t.Errorf("%d map calls ran at once, more than MapConcurrency 2", most.Load())
	}
	chunks := make([]string, n)
	nonce := nonceOf(t, m.maps[0].system)
	budget := chunkBudget(e, "the ids", p.withDefaults())
	for _, c := range m.maps {
		var idx, total int
		if _, err := fmt.Sscanf(c.system[strings.Index(c.system, "- Index: "):], "- Index: %d of %d", &idx, &total); err != nil || total != n {
			t.Fatalf("chunk info: %v (total %d of %d)", err, total, n)
		}
		for _, want := range []string{"- Name: db__query", `- Arguments (verbatim JSON): {"sql":"select *"}`,
			fmt.Sprintf("- Bytes: %d\n- Lines: 1500\n- Tokens (estimate): %d", len(doc), e.Tokens),
			"- Overlap: 10%", "WHAT TO EXTRACT\nthe ids\n", "<ai-agent-" + nonce + "-FINAL format=\"text\">"} {
			if !strings.Contains(c.system, want) {
				t.Errorf("map prompt of chunk %d lacks %q", idx, want)
			}
		}
		chunks[idx-1] = chunkOf(c.user)
		if tok := llm.EstimateTokens(chunks[idx-1]); tok > budget {
			t.Errorf("chunk %d has %d tokens, over the budget of %d", idx, tok, budget)
		}
	}
	// Equal sizes, each chunk repeating the end of the one before, and
	// together the whole document.
	core := len(doc) / n
	var rebuilt strings.Builder
	for i, c := range chunks {
		body := c
		if i > 0 {
			ov := overlapOf(chunks[i-1], c)
			if ov < core/20 || ov > core/5 {
				t.Errorf("chunk %d repeats %d bytes of chunk %d; want about 10%% of %d", i+1, ov, i, core)
			}
			body = c[ov:]
		}
		if d := len(body) - core; d < -200 || d > 200 {
			t.Errorf("chunk %d has %d new bytes, want about %d", i+1, len(body), core)
		}
		if !strings.HasSuffix(c, "\n") {
			t.Errorf("chunk %d does not end on a line boundary", i+1)
		}
		rebuilt.WriteString(body)
	}
	if rebuilt.String() != doc {
		t.Error("the chunks without their overlaps are not the document")
	}
	r := m.reduces[0].system
	for _, want := range []string{"--- CHUNK 1 of " + fmt.Sprint(n) + " ---\nsome ids", "WHAT TO EXTRACT\nthe ids", "- Name: db__query"} {
		if !strings.Contains(r, want) {
			t.Errorf("reduce prompt lacks %q", want)
		}
	}
}

// overlapOf is the length of the longest end of a that starts b.
func overlapOf(a, b string) int {
	for n := min(len(a), len(b)); n > 0; n-- {
		if strings.HasPrefix(b, a[len(a)-n:]) {
			return n
		}
	}
	return 0
}

func TestASingleChunkIsOnePassWithoutReduce(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	e := put(t, s, "t", "{}", lines(30, 50))
	m := &scripted{answer: func(system, _ string) (string, error) {
		// No closing tag: models often stop without it.
		return "thinking…\n<ai-agent-" + nonceRe.FindStringSubmatch(system)[1] + "-FINAL format=\"text\">line 3 is the one", nil
	}}
	x := &Extractor{Policy: smallModel, Model: m.model}
	out := x.Extract(context.Background(), Request{Store: s, Handle: e.Handle, Extract: "which line"})
	if !out.OK || out.Calls != 1 || len(m.reduces) != 0 || !strings.HasSuffix(out.Text, "\n\nline 3 is the one") {
		t.Fatalf("outcome %+v, %d reduces", out, len(m.reduces))
	}
	if chunkOf(m.maps[0].user) != lines(30, 50) || !strings.Contains(m.maps[0].system, "- Index: 1 of 1") {
		t.Error("the single pass did not get the whole document as chunk 1 of 1")
	}
}

func TestFailedStrategiesFallBackToTruncate(t *testing.T) {
	t.Parallel()
	wrongNonce := func(string, string) (string, error) {
		return `<ai-agent-0000deadbeef-FINAL format="text">an answer</ai-agent-0000deadbeef-FINAL>`, nil
	}
	for _, tc := range []struct {
		name  string
		mode  Mode
		model func(system, user string) (string, error)
		sub   SubAgent
		why   string
		calls int // at least: a failed call is tried twice, and other chunks may be in flight
	}{
		{name: "an answer with another nonce", mode: ModeFullChunked, model: wrongNonce, why: "no final-report wrapper", calls: 2},
		{name: "a model error", mode: ModeFullChunked, model: func(string, string) (string, error) { return "", errors.New("HTTP 500") }, why: "HTTP 500", calls: 2},
		{name: "an empty wrapper", mode: ModeFullChunked, model: func(s, _ string) (string, error) { return wrap(s, " "), nil }, why: "empty", calls: 2},
		{name: "a synthetic sub-agent report", mode: ModeReadGrep, why: "without a report of its own",
			sub: func(context.Context, string, string, tools.Provider) (string, bool, error) {
				return "I ran out of turns", true, nil
			}},
		{name: "a sub-agent error", mode: ModeReadGrep, why: "could not start",
			sub: func(context.Context, string, string, tools.Provider) (string, bool, error) {
				return "", false, errors.New("could not start")
			}},
		{name: "no sub-agent runner", mode: ModeReadGrep, why: "no sub-agent runner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			core, logs := observer.New(zap.InfoLevel)
			s, _ := newStore(t)
			doc := "TOP LINE\n" + lines(3000, 40) + "BOTTOM LINE\n"
			e := put(t, s, "t", "{}", doc)
			x := &Extractor{Policy: smallModel, SubAgent: tc.sub, Log: zap.New(core)}
			if tc.model != nil {
				x.Model = (&scripted{answer: tc.model}).model
			}
			out := x.Extract(context.Background(), Request{Store: s, Handle: e.Handle, Extract: "x", Mode: tc.mode})
			if !out.OK || !out.FellBack || out.Mode != ModeTruncate || out.Tried != tc.mode || out.Calls < tc.calls || tc.calls == 0 && out.Calls != 0 {
				t.Fatalf("outcome %+v", out)
			}
			head := "ABSTRACT FROM TOOL OUTPUT t WITH HANDLE " + e.Handle + ", STRATEGY:truncate:\n\nWARNING: extraction with " + string(tc.mode) + " failed ("
			if !strings.HasPrefix(out.Text, head) || !strings.Contains(out.Text, tc.why) ||
				!strings.Contains(out.Text, "); this is the top and bottom of the output with the middle cut out\n\nTOP LINE\n") {
				t.Errorf("text starts %q", tools.Snippet(out.Text, 400))
			}
			if !strings.HasSuffix(out.Text, "BOTTOM LINE\n") || !strings.Contains(out.Text, "bytes cut from the middle") {
				t.Errorf("text ends %q", out.Text[len(out.Text)-200:])
			}
			if len(out.Text) > defaultTruncateBytes+1000 {
				t.Errorf("the fallback is %d bytes", len(out.Text))
			}
			if logs.FilterLevelExact(zap.WarnLevel).FilterMessageSnippet("falling back to truncate").Len() != 1 {
				t.Errorf("no warning logged: %v", logs.All())
			}
		})
	}
}

func TestNotFoundIsASuccessThatSaysWhatWasSearched(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	e := put(t, s, "jira__search", "{}", lines(20, 40))
	m := &scripted{answer: func(system, _ string) (string, error) {
		return wrap(system, "NO RELEVANT DATA FOUND\nThe output lists numbered lines of x."), nil
	}}
	out := (&Extractor{Policy: smallModel, Model: m.model}).Extract(context.Background(),
		Request{Store: s, Handle: e.Handle, Extract: "the assignee of PROJ-7"})
	want := "ABSTRACT FROM TOOL OUTPUT jira__search WITH HANDLE " + e.Handle + ", STRATEGY:full-chunked:\n\n" +
		"NO RELEVANT DATA FOUND\nSearched for: the assignee of PROJ-7\n" +
		fmt.Sprintf("Searched: the whole output of jira__search (%d bytes, 20 lines), read in full in 1 chunk(s).\n", e.Bytes) +
		"What the output holds: The output lists numbered lines of x."
	if !out.OK || out.Text != want {
		t.Errorf("got\n%s\nwant\n%s", out.Text, want)
	}
}

func TestUnknownHandleAnswersInTheFailureFormat(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	e := put(t, s, "t", "{}", "x")
	other, _ := newStore(t)
	foreign := put(t, other, "t", "{}", "y")
	for _, h := range []string{"no-such-handle", foreign.Handle} {
		out := (&Extractor{}).Extract(context.Background(), Request{Store: s, Handle: h, Extract: "x"})
		head := "TOOL_OUTPUT FAILED FOR unknown WITH HANDLE " + h + ", STRATEGY:auto:\n\nThere is no stored tool output with handle"
		if out.OK || !strings.HasPrefix(out.Text, head) || !strings.Contains(out.Text, e.Handle) {
			t.Errorf("handle %s: %+v", h, out)
		}
	}
}

func TestOneHandleAnswersManyExtractions(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	e := put(t, s, "t", "{}", lines(20, 40))
	m := &scripted{answer: func(system, _ string) (string, error) {
		what := system[strings.Index(system, "WHAT TO EXTRACT\n")+16:]
		return wrap(system, "answer to "+what[:strings.IndexByte(what, '\n')]), nil
	}}
	x := &Extractor{Policy: smallModel, Model: m.model}
	for _, q := range []string{"first question", "second question", "first question"} {
		out := x.Extract(context.Background(), Request{Store: s, Handle: e.Handle, Extract: q})
		if !out.OK || !strings.HasSuffix(out.Text, "answer to "+q) {
			t.Errorf("%s: %+v", q, out)
		}
	}
	if nonceOf(t, m.maps[0].system) == nonceOf(t, m.maps[1].system) {
		t.Error("two extractions share a nonce")
	}
}

func TestTruncateOnRequestKeepsTopAndBottom(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	doc := "héllo wörld " + strings.Repeat("ü", 20000) + " the end"
	e := put(t, s, "t", "{}", doc)
	out := (&Extractor{}).Extract(context.Background(), Request{Store: s, Handle: e.Handle, Extract: "x", Mode: ModeTruncate})
	if !out.OK || out.FellBack || out.Mode != ModeTruncate || strings.Contains(out.Text, "WARNING") {
		t.Fatalf("outcome %+v", out)
	}
	body := strings.TrimPrefix(out.Text, "ABSTRACT FROM TOOL OUTPUT t WITH HANDLE "+e.Handle+", STRATEGY:truncate:\n\n")
	if !strings.HasPrefix(body, "héllo wörld ") || !strings.HasSuffix(body, " the end") || !strings.Contains(body, "bytes cut from the middle") {
		t.Errorf("body %q", tools.Snippet(body, 200))
	}
	if !strings.Contains(body, "ü\n\n[…") || !strings.Contains(body, "…]\n\nü") {
		t.Error("the cut split a rune")
	}
	small := put(t, s, "t", "{}", "short")
	out = (&Extractor{}).Extract(context.Background(), Request{Store: s, Handle: small.Handle, Extract: "x", Mode: ModeTruncate})
	if !strings.HasSuffix(out.Text, ":\n\nshort") {
		t.Errorf("a short output is not shown whole: %q", out.Text)
	}
}

func TestACancelledExtractionFails(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	e := put(t, s, "t", "{}", lines(20, 40))
	ctx, cancel := context.WithCancel(context.Background())
	m := func(ctx context.Context, _, _ string) (string, error) {
		cancel()
		return "", ctx.Err()
	}
	out := (&Extractor{Policy: smallModel, Model: m}).Extract(ctx, Request{Store: s, Handle: e.Handle, Extract: "x"})
	if out.OK || !strings.HasPrefix(out.Text, "TOOL_OUTPUT FAILED FOR t WITH HANDLE "+e.Handle+", STRATEGY:full-chunked:\n\nThe extraction was cancelled.") {
		t.Errorf("outcome %+v", out)
	}
}

func TestTooManyChunkAnswersAreReducedInRounds(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	e := put(t, s, "t", "{}", lines(3000, 70))
	long := strings.Repeat("an id worth keeping ", 120)
	m := &scripted{answer: func(system, _ string) (string, error) { return wrap(system, long), nil }}
	out := (&Extractor{Policy: smallModel, Model: m.model}).Extract(context.Background(),
		Request{Store: s, Handle: e.Handle, Extract: "ids", Mode: ModeFullChunked})
	if !out.OK || out.FellBack || len(m.reduces) < 3 || out.Calls != len(m.maps)+len(m.reduces) {
		t.Fatalf("outcome %+v with %d maps and %d reduces", out, len(m.maps), len(m.reduces))
	}
	for _, r := range m.reduces {
		if n := llm.CountTokens(r.system) + llm.CountTokens(r.user); n > smallModel.ContextWindow-smallModel.MaxOutputTokens {
			t.Errorf("a reduce call of %d tokens overflows the window", n)
		}
	}
}
