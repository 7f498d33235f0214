package playground_test

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/playground"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/rest"
)

// streamed shows sessions as streamed messages, as Slack does by default.
var streamed = bottest.WithConfig(func(c *config.Config) { c.Slack.Display = config.DisplayStream })

// heldTool is the REST tool rest__build_status, whose endpoint, an HTTP
// server on loopback, answers only once the test releases it: while it
// waits, the session's timeline shows the tool running.
type heldTool struct {
	options []bottest.Option
	release func()
}

func newHeldTool(t *testing.T) *heldTool {
	t.Helper()
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"job":"unit","status":"green"}`))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(release) // before the server closes
	p, err := rest.New(map[string]config.RestTool{"build_status": {
		Description: "The status of a CI job.", URL: srv.URL + "/jobs/{job}",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"job": map[string]any{"type": "string"}}, "required": []any{"job"}},
	}}, nil, rest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	orch := tools.New(context.Background(), tools.Options{}, p)
	t.Cleanup(func() { _ = orch.Close() })
	if err := orch.Warmup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &heldTool{release: release, options: []bottest.Option{
		bottest.WithRunner(func(r *agent.Runner) { r.Tools = orch }),
		bottest.WithConfig(func(c *config.Config) {
			a := c.Agents[bottest.AgentName]
			a.Tools = append(a.Tools, "rest__*")
			// The tool is held as long as the test needs.
			a.ToolTimeout = config.Duration(time.Minute)
		}),
	}}
}

// buildThenAnswer has the model ask for the build's status, then answer.
func buildThenAnswer(r *llmtest.Recorded) llmtest.Reply {
	for _, m := range r.Messages {
		if m.Role == llm.RoleTool {
			return llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("The build is *green*.")}}})
		}
	}
	return llmtest.Call("rest__build_status", `{"job":"unit"}`)
}

// drawnTask is a task of a streamed message as the page draws it.
type drawnTask struct{ status, title, details, output string }

var taskRE = regexp.MustCompile(`<li class="pg-task" data-testid="task" data-task-id="[^"]*" data-status="([a-z_]+)"(?: data-halted="true")?>` +
	`<span [^>]*>[^<]*</span><div class="pg-task-body"><div class="pg-task-title">([^<]*)</div>` +
	`(?:<div class="pg-task-details"[^>]*>([^<]*)</div>)?(?:<div class="pg-task-output"[^>]*>([^<]*)</div>)?</div></li>`)

// tasksIn reads the tasks a drawn message shows, their texts unescaped.
func tasksIn(drawn string) []drawnTask {
	var out []drawnTask
	for _, m := range taskRE.FindAllStringSubmatch(drawn, -1) {
		out = append(out, drawnTask{m[1], html.UnescapeString(m[2]), html.UnescapeString(m[3]), html.UnescapeString(m[4])})
	}
	return out
}

func TestAStreamedSessionShowsItsTimelineLiveAndEndsWithTheAnswer(t *testing.T) {
	t.Parallel()
	tool := newHeldTool(t)
	w := newWorld(t, append(tool.options, streamed)...)
	w.Model.Respond(buildThenAnswer)
	ts := w.Slack.Mention(playground.General, playground.User, "is the build green?")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var running, stopOffered, answered bool
	var last string
	for ev := range stream(ctx, t, w.page.URL+"/events?c=C0GENERAL&thread="+ts) {
		switch {
		case ev.name == "agent":
			if strings.Contains(ev.data["html"], `data-testid="agent-stop"`) && strings.Contains(ev.data["html"], "is the build green?") {
				stopOffered = true
			}
		case ev.name == "fragment" && ev.data["pane"] == "thread" && strings.Contains(ev.data["html"], `data-testid="stream"`):
			last = ev.data["html"]
			tasks := tasksIn(last)
			for _, tk := range tasks {
				if tk.title == "Build status" && tk.status == "in_progress" && tk.details == `job: "unit"` {
					running = true
				}
			}
			if !running || strings.Contains(last, `data-open="true"`) {
				break
			}
			// The stream has ended: every task settled, the answer and
			// its feedback buttons drawn, nothing shown as still writing.
			for _, tk := range tasks {
				if tk.status != "complete" {
					t.Errorf("task %+v is %s after the answer; want complete", tk, tk.status)
				}
			}
			if len(tasks) < 2 || tasks[1].title != "Build status" {
				t.Errorf("tasks %+v; want the model's turn, then the tool", tasks)
			}
			if !strings.Contains(last, "<b>green</b>") || !strings.Contains(last, `data-action-id="slackbot_feedback"`) ||
				strings.Contains(last, `data-testid="streaming"`) {
				t.Errorf("the ended stream lacks the answer or its feedback buttons:\n%s", last)
			}
			answered = true
		}
		if running && stopOffered {
			tool.release()
		}
		if answered {
			break
		}
	}
	if !running || !stopOffered || !answered {
		t.Fatalf("running tool shown %v, Stop offered %v, answered %v; last drawn:\n%s", running, stopOffered, answered, last)
	}
}

func TestSlacksStopOnAWorkingSessionStopsItForThePersonAtThePage(t *testing.T) {
	t.Parallel()
	w := newWorld(t, streamed)
	w.Model.Respond(slow)
	ts := w.Slack.Mention(playground.General, playground.User, "take your time")
	w.Eventually("the agent session to be processing", func() bool {
		a, ok := w.Slack.AgentSession(playground.General, ts)
		return ok && a.Status == "processing"
	})
	if _, err := w.Model.WaitContext(ctxFor(t), 1); err != nil {
		t.Fatal(err)
	}
	body := `{"channel":"C0GENERAL","thread_ts":"` + ts + `"}`
	before := len(w.Slack.Envelopes())
	for _, a := range postAttacks {
		h := fromThePage(t, w)
		a.change(h)
		if status, answer := do(t, "POST", w.page.URL+"/stop", body, h); status != a.status {
			t.Errorf("%s: %d %q, want %d", a.name, status, answer, a.status)
		}
	}
	post(t, w.page.URL+"/stop", `{"channel":"C0SECRET","thread_ts":"`+ts+`"}`, http.StatusBadRequest)
	post(t, w.page.URL+"/stop", `{"channel":"C0GENERAL","thread_ts":"1.000001"}`, http.StatusNotFound)
	if n := len(w.Slack.Envelopes()); n != before {
		t.Fatalf("a refused stop reached the bot (%d envelopes, %d before)", n, before)
	}
	post(t, w.page.URL+"/stop", body, http.StatusNoContent)
	w.stoppedIn(ts)
	streams := w.Slack.Streams(playground.General)
	if len(streams) != 1 || streams[0].StoppedBy != playground.User || streams[0].Open {
		t.Errorf("streams %+v; want the one stream halted by the person at the page", streams)
	}
	w.Eventually("the agent session to stop processing", func() bool {
		a, _ := w.Slack.AgentSession(playground.General, ts)
		return a.Status != "processing"
	})
	post(t, w.page.URL+"/stop", body, http.StatusConflict)
}

func TestInPlanModeTheStreamShowsThePlanTheModelTitledAboveItsTasks(t *testing.T) {
	t.Parallel()
	w := newWorld(t, streamed, bottest.WithConfig(func(c *config.Config) {
		c.Slack.TaskDisplay = config.TaskDisplayPlan
		c.Agents[bottest.AgentName].Tools = append(c.Agents[bottest.AgentName].Tools, agent.TaskStatusTool)
	}))
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		for _, m := range r.Messages {
			if m.Role == llm.RoleTool {
				return llmtest.TextReport("Budgets checked.")
			}
		}
		return llmtest.Call(agent.TaskStatusTool, `{"status":"in-progress","done":"","pending":"the report","now":"Checking the budgets","ready_for_final_report":false,"need_to_run_more_tools":false}`)
	})
	ts := w.Slack.Mention(playground.General, playground.User, "check the budgets")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var last string
	for ev := range stream(ctx, t, w.page.URL+"/events?c=C0GENERAL&thread="+ts) {
		if ev.name != "fragment" || !strings.Contains(ev.data["html"], `data-open="false"`) {
			continue
		}
		last = ev.data["html"]
		title := strings.Index(last, `<div class="pg-plan-title" data-testid="plan-title">Checking the budgets</div>`)
		tasks := strings.Index(last, `data-testid="tasks"`)
		if !strings.Contains(last, `data-mode="plan"`) || title < 0 || tasks < title || len(tasksIn(last)) == 0 {
			t.Fatalf("the ended stream is not a plan titled by the model above its tasks:\n%s", last)
		}
		if !strings.Contains(last, "Budgets checked.") {
			t.Fatalf("the ended plan lacks the answer:\n%s", last)
		}
		return
	}
	t.Fatalf("the stream never ended; last drawn:\n%s", last)
}
