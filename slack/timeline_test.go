package slack

import (
	"strings"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/tools"
)

// events of a session "s" of agent "helper": two turns, three tools (one
// failing), a sub-agent with a tool of its own, a task status.
func timelineEvents() []agent.Event {
	top, sub := []string{"helper"}, []string{"helper", "researcher"}
	at := time.Unix(0, 0)
	tool := func(kind agent.EventKind, path []string, session, id, name string, ok bool, failure tools.Failure) agent.Event {
		index := int(id[len(id)-1] - '1') // c1 is the turn's first call
		return agent.Event{Kind: kind, Session: session, Path: path, Time: at, Tool: &agent.ToolInfo{ID: id, Name: name, Index: index,
			Args: `query: "rate limits"`, OK: ok, Failure: string(failure)}}
	}
	return []agent.Event{
		{Kind: agent.EventTurnStarted, Session: "s", Path: top, Turn: 1},
		{Kind: agent.EventLLMCall, Session: "s", Path: top, LLM: &agent.LLMCallInfo{ToolCalls: 5}},
		{Kind: agent.EventTaskStatus, Session: "s", Path: top, Status: &agent.TaskStatus{Now: "Checking the budgets"}},
		tool(agent.EventToolStarted, top, "s", "c1", "search_code", false, ""),
		tool(agent.EventToolStarted, top, "s", "c2", "getWeather", false, ""),
		tool(agent.EventToolStarted, top, "s", "c3", "broken", false, ""),
		tool(agent.EventToolStarted, top, "s", "c4", "agent__researcher", false, ""),
		tool(agent.EventToolStarted, top, "s", "c5", agent.TaskStatusTool, false, ""),
		{Kind: agent.EventTurnStarted, Session: "r", Path: sub, Turn: 1},
		tool(agent.EventToolStarted, sub, "r", "x1", agent.ToolOutputTool, false, ""),
		tool(agent.EventToolFinished, sub, "r", "x1", agent.ToolOutputTool, true, ""),
		tool(agent.EventToolFinished, top, "s", "c1", "search_code", true, ""),
		tool(agent.EventToolFinished, top, "s", "c2", "getWeather", true, ""),
		tool(agent.EventToolFinished, top, "s", "c3", "broken", false, tools.FailTimeout),
		tool(agent.EventToolFinished, top, "s", "c4", "agent__researcher", true, ""),
		{Kind: agent.EventTurnStarted, Session: "s", Path: top, Turn: 2, Final: true},
		tool(agent.EventToolStarted, top, "s", "c6", agent.FinalReportTool, false, ""),
	}
}

func TestTimelineMakesOneTaskPerTurnToolAndSubAgentInOrder(t *testing.T) {
	t.Parallel()
	tl := newTimeline()
	for _, e := range timelineEvents() {
		tl.observe(e)
	}
	type want struct {
		title  string
		status slackapi.TaskCardStatus
		output string
	}
	wants := []want{
		{"Thinking", slackapi.TaskCardStatusComplete, "Asked for 5 tool calls"},
		{"Search code", slackapi.TaskCardStatusComplete, "Done"},
		{"Get weather", slackapi.TaskCardStatusComplete, "Done"},
		{"Broken", slackapi.TaskCardStatusError, "Failed: timed out"},
		{"researcher", slackapi.TaskCardStatusComplete, "Done"},
		{"researcher › Reading a large result", slackapi.TaskCardStatusComplete, "Done"},
		{"Writing the answer", slackapi.TaskCardStatusInProgress, ""},
	}
	got := tl.all()
	if len(got) != len(wants) {
		t.Fatalf("%d tasks %+v; want %d", len(got), got, len(wants))
	}
	for i, w := range wants {
		g := got[i]
		if g.title != w.title || g.status != w.status || g.output != w.output {
			t.Errorf("task %d = %q %s %q; want %q %s %q", i, g.title, g.status, g.output, w.title, w.status, w.output)
		}
		if g.id == "" || (i > 0 && g.id == got[i-1].id) {
			t.Errorf("task %d has id %q: ids must be set and distinct", i, g.id)
		}
	}
	if got[1].details != `query: "rate limits"` || got[0].details != "" {
		t.Errorf("details %q / %q: a tool shows what it was asked, a turn nothing", got[1].details, got[0].details)
	}
	tl.settle(false, "Stopped by someone")
	last := tl.all()[len(wants)-1]
	if last.status != slackapi.TaskCardStatusError || last.output != "Stopped by someone" {
		t.Errorf("an open task after a failed session is %s %q; want error with why", last.status, last.output)
	}
}

func TestTimelineEmitsOnlyWhatChangedSinceTheLastLook(t *testing.T) {
	t.Parallel()
	tl := newTimeline()
	evs := timelineEvents()
	for _, e := range evs[:4] {
		tl.observe(e)
	}
	tasks, plan, planNew := tl.changes()
	if len(tasks) != 1 || !planNew || plan != "Checking the budgets" {
		t.Fatalf("first look: %+v, plan %q (%v); want the turn alone (its calls wait for one another) and the plan's title", tasks, plan, planNew)
	}
	if tasks, _, planNew := tl.changes(); len(tasks) != 0 || planNew {
		t.Fatalf("nothing happened, yet %d tasks changed (plan %v)", len(tasks), planNew)
	}
	// The turn's other calls start, the last first: shown together once
	// all have started, in the model's order.
	for _, i := range []int{7, 6, 5, 4} {
		tl.observe(evs[i])
	}
	tasks, _, _ = tl.changes()
	var titles []string
	for _, tk := range tasks {
		titles = append(titles, tk.title)
	}
	if strings.Join(titles, ",") != "Search code,Get weather,Broken,researcher" {
		t.Fatalf("second look: %v; want the calls in the model's order", titles)
	}
	tl.observe(evs[11]) // search_code finishes
	tasks, _, planNew = tl.changes()
	if len(tasks) != 1 || tasks[0].title != "Search code" || tasks[0].status != slackapi.TaskCardStatusComplete || planNew {
		t.Fatalf("third look: %+v; want Search code complete alone", tasks)
	}
	// The status of a task only moves forward: a second finish is ignored.
	tl.observe(evs[11])
	if tasks, _, _ := tl.changes(); len(tasks) != 0 {
		t.Fatalf("a repeated finish changed %+v", tasks)
	}
}

func TestTimelineTextIsOneShortLineWithoutSecrets(t *testing.T) {
	t.Parallel()
	tl := newTimeline()
	long := strings.Repeat("x", 1000)
	tl.observe(agent.Event{Kind: agent.EventToolStarted, Session: "s", Path: []string{"a"}, Tool: &agent.ToolInfo{ID: "1",
		Name: "weird\x00name_" + long, Args: "token xoxb-1234567890-abcdefghijkl\nand " + long}})
	tl.observe(agent.Event{Kind: agent.EventTaskStatus, Session: "s", Path: []string{"a"}, Status: &agent.TaskStatus{Now: "use sk-abcdefghijklmnopqrstuvwx now\n" + long}})
	tasks, plan, _ := tl.changes()
	d := tasks[0]
	for _, s := range []string{d.title, d.details, plan} {
		if len([]rune(s)) > maxTaskLine || strings.ContainsAny(s, "\n\x00") || strings.Contains(s, "xoxb-1234567890") || strings.Contains(s, "sk-abcdefghijklmnop") {
			t.Errorf("%q: want one line of at most %d characters, without credentials or control characters", s, maxTaskLine)
		}
	}
	if len([]rune(d.title)) > maxTaskTitle {
		t.Errorf("title of %d characters; want at most %d", len([]rune(d.title)), maxTaskTitle)
	}
}

func TestTaskWordsCannotBeReadAsSlackMarkup(t *testing.T) {
	t.Parallel()
	tl := newTimeline()
	tl.observe(agent.Event{Kind: agent.EventToolStarted, Session: "s", Path: []string{"a"}, Tool: &agent.ToolInfo{ID: "1",
		Name: "lookup", Args: `q: "<!channel> ping <@U0BOSS> <https://evil.example|okta.com>"`}})
	tasks, _, _ := tl.changes()
	c := tasks[0].chunk()
	for _, s := range []string{c.Title, c.Details} {
		if strings.ContainsAny(s, "<>") {
			t.Errorf("%q reaches Slack with markup in it", s)
		}
	}
	if plan := chunksOf(nil, "<!here> done", true)[0].(slackapi.PlanUpdateChunk); strings.ContainsAny(plan.Title, "<>") {
		t.Errorf("plan title %q reaches Slack with markup in it", plan.Title)
	}
}

// A search for a tool is a task that says what it looks for, in the
// model's words made harmless.
func TestASearchForAToolSaysWhatItLooksFor(t *testing.T) {
	t.Parallel()
	tl := newTimeline()
	tl.observe(agent.Event{Kind: agent.EventToolStarted, Session: "s", Path: []string{"a"}, Tool: &agent.ToolInfo{ID: "1",
		Name: agent.SearchTool, Status: "Looking for a tool to list the <!channel> issues"}})
	tasks, _, _ := tl.changes()
	if len(tasks) != 1 {
		t.Fatalf("%d tasks, want the search", len(tasks))
	}
	c := tasks[0].chunk()
	if !strings.HasPrefix(c.Title, "Looking for a tool to list the") || strings.ContainsAny(c.Title, "<>") {
		t.Errorf("the search's task is titled %q", c.Title)
	}
}

// A wait on a person is a task per wait, in progress until it is over,
// then complete with how it ended; the count of open waits tells the
// stream when to suspend the agent session and when to resume it.
func TestAWaitOnAPersonIsATaskUntilItIsOver(t *testing.T) {
	t.Parallel()
	tl := newTimeline()
	tl.names = func(w *agent.WaitInfo) []string {
		out := []string{}
		for _, id := range w.Who {
			out = append(out, map[string]string{"U1": "ada", "U2": "bob"}[id])
		}
		return out
	}
	wait := func(kind agent.EventKind, id, outcome string, who ...string) {
		tl.observe(agent.Event{Kind: kind, Wait: &agent.WaitInfo{ID: id, Who: who, What: "approval of github create_issue", Outcome: outcome}})
	}
	tl.observe(agent.Event{Kind: agent.EventTurnStarted, Session: "s", Path: []string{"helper"}, Turn: 1})
	tl.changes()
	wait(agent.EventWaiting, "w1", "", "U1")
	wait(agent.EventWaiting, "w2", "", "U1", "U2")
	wait(agent.EventWaiting, "w2", "", "U1", "U2") // told twice
	if n := tl.waiting(); n != 2 {
		t.Fatalf("%d waits open; want 2", n)
	}
	tasks, _, _ := tl.changes()
	if len(tasks) != 2 {
		t.Fatalf("changes %+v; want the two waits", tasks)
	}
	for i, want := range []string{"Waiting for @ada", "Waiting for @ada or @bob"} {
		if g := tasks[i]; g.title != want || g.status != slackapi.TaskCardStatusInProgress || g.details != "approval of github create_issue" {
			t.Errorf("wait %d = %q %s %q; want %q in progress saying what it waits for", i, g.title, g.status, g.details, want)
		}
	}
	wait(agent.EventResumed, "w1", "approved")
	wait(agent.EventResumed, "w1", "denied") // a second end of the same wait changes nothing
	if n := tl.waiting(); n != 1 {
		t.Errorf("%d waits open after one ended; want 1", n)
	}
	tasks, _, _ = tl.changes()
	if len(tasks) != 1 || tasks[0].status != slackapi.TaskCardStatusComplete || tasks[0].output != "Approved" {
		t.Fatalf("changes %+v; want the first wait complete, approved", tasks)
	}
	wait(agent.EventResumed, "w2", "timed out")
	if n := tl.waiting(); n != 0 {
		t.Errorf("%d waits open; want none", n)
	}
	if tasks, _, _ = tl.changes(); len(tasks) != 1 || tasks[0].output != "Timed out" {
		t.Errorf("changes %+v; want the second wait over, timed out", tasks)
	}
}

// A session that ends while it waits on a person leaves no wait in
// progress: the stop that ends its stream settles it.
func TestAWaitStillOpenWhenTheSessionEndsIsSettled(t *testing.T) {
	t.Parallel()
	tl := newTimeline()
	tl.observe(agent.Event{Kind: agent.EventWaiting, Wait: &agent.WaitInfo{ID: "w1", Who: []string{"U1"}, What: "an approval"}})
	tl.settle(false, "Stopped by the asker")
	got := tl.all()
	if len(got) != 1 || got[0].title != "Waiting for @U1" || got[0].status != slackapi.TaskCardStatusError || got[0].output != "Stopped by the asker" {
		t.Errorf("tasks %+v; want the wait, named by id without a name book, ended in error with why", got)
	}
	if n := tl.waiting(); n != 0 {
		t.Errorf("%d waits still open after the session ended", n)
	}
}

func TestAWaitsTitleNamesAtMostThreePeople(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		names []string
		want  string
	}{
		{nil, "Waiting for a person"},
		{[]string{"ada"}, "Waiting for @ada"},
		{[]string{"@ada", "bob"}, "Waiting for @ada or @bob"},
		{[]string{"ada", "bob", "cy"}, "Waiting for @ada, @bob or @cy"},
		{[]string{"ada", "bob", "cy", "dee", "eve"}, "Waiting for @ada, @bob, @cy or 2 more"},
	} {
		if got := waitTitle(c.names); got != c.want {
			t.Errorf("waitTitle(%q) = %q; want %q", c.names, got, c.want)
		}
	}
}

// Who a wait is on and what for are words from elsewhere (a display name,
// a tool's name): in a chunk they cannot ping or link.
func TestAWaitsWordsCannotBeReadAsSlackMarkup(t *testing.T) {
	t.Parallel()
	tl := newTimeline()
	tl.names = func(*agent.WaitInfo) []string { return []string{"<!channel>"} }
	tl.observe(agent.Event{Kind: agent.EventWaiting, Wait: &agent.WaitInfo{ID: "w1", Who: []string{"U1"},
		What: "approval of <@U0EVE> <https://evil.example|okta> xoxb-1234567890-abcdefghij"}})
	tasks, _, _ := tl.changes()
	if len(tasks) != 1 {
		t.Fatalf("changes %+v", tasks)
	}
	c := tasks[0].chunk()
	for _, bad := range []string{"<!channel>", "<@U0EVE>", "<https://", "xoxb-1234567890"} {
		if strings.Contains(c.Title+c.Details, bad) {
			t.Errorf("chunk %q / %q holds %q", c.Title, c.Details, bad)
		}
	}
}

// A session broken off (stopped, interrupted, failed on the way) leaves
// what was running unfinished, in error, even though the stop that ends
// its stream carries a made-up answer; one that answered leaves no error.
func TestABrokenOffSessionEndsItsRunningTasksInError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, err string
		want      slackapi.TaskCardStatus
	}{
		{"broken off", "context canceled", slackapi.TaskCardStatusError},
		{"answered", "", slackapi.TaskCardStatusInProgress},
	} {
		tl := newTimeline()
		tl.observe(agent.Event{Kind: agent.EventTurnStarted, Session: "s", Path: []string{"helper"}, Turn: 1})
		tl.observe(agent.Event{Kind: agent.EventSessionDone, Session: "r", Path: []string{"helper", "researcher"}, Err: "context canceled"})
		tl.observe(agent.Event{Kind: agent.EventSessionDone, Session: "s", Path: []string{"helper"}, Err: c.err})
		got := tl.all()
		if len(got) != 1 || got[0].status != c.want {
			t.Errorf("%s: tasks %+v; want the turn %s", c.name, got, c.want)
		}
		if c.err != "" && got[0].output != unfinished {
			t.Errorf("%s: output %q; want %q", c.name, got[0].output, unfinished)
		}
	}
}

// A call that fails at once, before the turn's other calls have started,
// does not jump ahead of them: it is shown with them, in the model's
// order. Calls that never start cannot hold the others past holdGrace.
func TestACallFailingAtOnceKeepsItsPlaceInTheTurn(t *testing.T) {
	t.Parallel()
	top := []string{"helper"}
	call := func(kind agent.EventKind, id string, index int, ok bool) agent.Event {
		return agent.Event{Kind: kind, Session: "s", Path: top, Tool: &agent.ToolInfo{ID: id, Name: "echo", Index: index, OK: ok,
			Failure: map[bool]string{false: string(tools.FailInvalidArgs)}[ok]}}
	}
	titles := func(tasks []task) (out []string) {
		for _, t := range tasks {
			out = append(out, t.id+" "+string(t.status))
		}
		return out
	}
	tl := newTimeline()
	tl.observe(agent.Event{Kind: agent.EventTurnStarted, Session: "s", Path: top, Turn: 1})
	tl.observe(agent.Event{Kind: agent.EventLLMCall, Session: "s", Path: top, LLM: &agent.LLMCallInfo{ToolCalls: 3}})
	tl.changes()
	tl.observe(call(agent.EventToolStarted, "c3", 2, false))
	tl.observe(call(agent.EventToolFinished, "c3", 2, false))
	if tasks, _, _ := tl.changes(); len(tasks) != 0 {
		t.Fatalf("changes %v; want the failed call held for the turn's others", titles(tasks))
	}
	tl.observe(call(agent.EventToolStarted, "c1", 0, true))
	tl.observe(call(agent.EventToolStarted, "c2", 1, true))
	got := titles(func() []task { tasks, _, _ := tl.changes(); return tasks }())
	want := []string{"task-3 in_progress", "task-4 in_progress", "task-2 error"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("changes %v; want %v: the model's order, the failed call last", got, want)
	}

	// Two calls asked for, one starts: past holdGrace it shows alone.
	tl.observe(agent.Event{Kind: agent.EventTurnStarted, Session: "s", Path: top, Turn: 2})
	tl.observe(agent.Event{Kind: agent.EventLLMCall, Session: "s", Path: top, LLM: &agent.LLMCallInfo{ToolCalls: 2}})
	tl.changes()
	tl.observe(call(agent.EventToolStarted, "c4", 0, true))
	if tasks, _, _ := tl.changes(); len(tasks) != 0 {
		t.Fatalf("changes %v; want the call held for the other", titles(tasks))
	}
	tl.mu.Lock()
	tl.heldSince = tl.heldSince.Add(-holdGrace)
	tl.mu.Unlock()
	if tasks, _, _ := tl.changes(); len(tasks) != 1 || tasks[0].status != slackapi.TaskCardStatusInProgress {
		t.Errorf("changes %v; want the started call shown once its grace is over", titles(tasks))
	}
}
