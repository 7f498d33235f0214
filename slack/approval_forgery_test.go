package slack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/state"
)

// Clicks are the workspace's words: forged, replayed, late or from
// another organisation, none decides a call it may not.
func TestForgedApprovalClicksDecideNothing(t *testing.T) {
	t.Parallel()

	t.Run("an approver of another organisation (Slack Connect) is refused and decides nothing", func(t *testing.T) {
		t.Parallel()
		const ext = "U0EXTERN"
		w, notes, _ := approvalWorldFor(t, time.Minute, []string{config.ApproverAsker, ext})
		w.Slack.AddTeamUser(ext, "extern", "T0OTHER", "")
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Done."))
		ts := w.Slack.Mention(channel, asker, "delete")
		m := awaitApproval(w, ts, 1)
		click(t, w, m, ext, "slackbot_approve", buttonValues(t, m)[0])
		w.Eventually("the stranger to be refused", func() bool {
			for _, e := range w.Slack.Ephemerals() {
				if e.User == ext {
					return true
				}
			}
			return false
		})
		click(t, w, m, asker, "slackbot_deny", buttonValues(t, m)[0])
		w.Answered(channel, ts, "Done.")
		if notes.count("delete_note") != 0 || !strings.Contains(blocksText(messageNow(w, ts, m.TS)), "Denied by <@"+asker+">") {
			t.Fatalf("delete ran %d times; %s", notes.count("delete_note"), blocksText(messageNow(w, ts, m.TS)))
		}
	})

	t.Run("Approve then Deny: the first decision holds and the message says so", func(t *testing.T) {
		t.Parallel()
		w, notes, _ := approvalWorld(t, time.Minute)
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Done."))
		ts := w.Slack.Mention(channel, asker, "delete")
		m := awaitApproval(w, ts, 1)
		v := buttonValues(t, m)[0]
		click(t, w, m, asker, "slackbot_approve", v)
		click(t, w, m, asker, "slackbot_deny", v)
		w.Answered(channel, ts, "Done.")
		now := blocksText(messageNow(w, ts, m.TS))
		if notes.count("delete_note") != 1 || !strings.Contains(now, "Approved by") || strings.Contains(now, "Denied") {
			t.Fatalf("delete ran %d times; %s", notes.count("delete_note"), now)
		}
	})

	t.Run("a late Approve for this thread neither runs the call nor approves the tool for the thread", func(t *testing.T) {
		t.Parallel()
		w, notes, _ := approvalWorld(t, 300*time.Millisecond)
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Nobody answered."))
		ts := w.Slack.Mention(channel, asker, "delete")
		m := awaitApproval(w, ts, 1)
		v := buttonValues(t, m)[0]
		w.Answered(channel, ts, "Nobody answered.")
		// Its buttons are gone: the late click comes in on the next
		// question's message, carrying the first wait.
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Asked again."))
		w.Slack.Reply(channel, ts, asker, "try again")
		m2 := awaitApproval(w, ts, 2)
		click(t, w, m2, asker, "slackbot_approve_thread", v)
		w.Logged("approval recorded for the replica running the session")
		click(t, w, m2, asker, "slackbot_deny", buttonValues(t, m2)[0])
		w.Answered(channel, ts, "Asked again.")
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Asked a third time."))
		w.Slack.Reply(channel, ts, asker, "and again")
		w.Answered(channel, ts, "Asked a third time.")
		if n := w.Logs.FilterMessage("waiting").Len(); n != 3 {
			t.Errorf("the third session was asked %d times in all, want 3", n)
		}
		if notes.count("delete_note") != 0 || !strings.Contains(blocksText(messageNow(w, ts, m.TS)), "No decision in time") {
			t.Fatalf("delete ran %d times; %s", notes.count("delete_note"), blocksText(messageNow(w, ts, m.TS)))
		}
	})

	t.Run("Approve for this thread holds in its thread alone, and its button replayed in another thread decides nothing", func(t *testing.T) {
		t.Parallel()
		w, notes, _ := approvalWorld(t, time.Minute)
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("First gone."))
		tsA := w.Slack.Mention(channel, asker, "delete 1")
		mA := awaitApproval(w, tsA, 1)
		vA := buttonValues(t, mA)[0]
		click(t, w, mA, asker, "slackbot_approve_thread", vA)
		w.Answered(channel, tsA, "First gone.")
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"2"}`), llmtest.TextReport("Second asked."))
		tsB := w.Slack.Mention(channel, asker, "delete 2")
		mB := awaitApproval(w, tsB, 1)
		click(t, w, mB, asker, "slackbot_approve_thread", vA)
		w.Logged("approval recorded for the replica running the session")
		if notes.count("delete_note") != 1 || !strings.Contains(string(messageNow(w, tsB, mB.TS).Blocks), "slackbot_approve") {
			t.Fatal("the other thread's button decided")
		}
		click(t, w, mB, asker, "slackbot_deny", buttonValues(t, mB)[0])
		w.Answered(channel, tsB, "Second asked.")
		if notes.count("delete_note") != 1 {
			t.Fatalf("delete ran %d times", notes.count("delete_note"))
		}
	})

	t.Run("a stranger naming themselves the asker on the other replica decides nothing", func(t *testing.T) {
		t.Parallel()
		const stranger = "U0STRANGER"
		w, notes, _ := approvalWorld(t, time.Minute)
		w.Slack.AddUser(stranger, "stranger")
		w.Replica()
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Done."))
		ts := w.Slack.Mention(channel, asker, "delete")
		m := awaitApproval(w, ts, 1)
		wait, _, _ := strings.Cut(buttonValues(t, m)[0], "|")
		other := otherConn(w, mentionConn(w, ts))
		if _, err := w.Slack.ClickOn(other, channel, m.TS, stranger, "slackbot_approve", wait+"|"+stranger+"|notes__delete_note"); err != nil {
			t.Fatal(err)
		}
		w.Logged("approval recorded for the replica running the session")
		if _, err := w.Slack.ClickOn(other, channel, m.TS, asker, "slackbot_deny", buttonValues(t, m)[0]); err != nil {
			t.Fatal(err)
		}
		w.Answered(channel, ts, "Done.")
		now := blocksText(messageNow(w, ts, m.TS))
		if notes.count("delete_note") != 0 || !strings.Contains(now, "Denied by <@"+asker+">") {
			t.Fatalf("delete ran %d times; %s", notes.count("delete_note"), now)
		}
	})
}

// A session stopped, or a bot shut down, while a call waits: the call is
// not run and the approval message loses its buttons.
func TestAWaitingApprovalEndsWithItsSession(t *testing.T) {
	t.Parallel()

	t.Run("Stop", func(t *testing.T) {
		t.Parallel()
		w, notes, _ := approvalWorld(t, time.Minute)
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Done."))
		ts := w.Slack.Mention(channel, asker, "delete")
		m := awaitApproval(w, ts, 1)
		progress := w.ProgressMessage(channel, ts)
		if _, err := w.Slack.Click(channel, progress.TS, asker, "slackbot_stop", stopValue(t, progress)); err != nil {
			t.Fatal(err)
		}
		w.Eventually("the approval message to settle", func() bool {
			now := string(messageNow(w, ts, m.TS).Blocks)
			return !strings.Contains(now, "slackbot_approve") && strings.Contains(now, "Not run")
		})
		w.Answered(channel, ts, "Stopped by")
		if notes.count("delete_note") != 0 {
			t.Fatal("the stopped session's call ran")
		}
	})

	t.Run("shutdown", func(t *testing.T) {
		t.Parallel()
		w, notes, _ := approvalWorld(t, time.Minute)
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Done."))
		ts := w.Slack.Mention(channel, asker, "delete")
		m := awaitApproval(w, ts, 1)
		w.Shutdown()
		now := string(messageNow(w, ts, m.TS).Blocks)
		if notes.count("delete_note") != 0 || strings.Contains(now, "slackbot_approve") {
			t.Fatalf("delete ran %d times; %s", notes.count("delete_note"), now)
		}
	})
}

// What a person is shown to decide, and what the logs and the session's
// record keep, carry no secret among the arguments.
func TestApprovalArgumentsLeakNoSecret(t *testing.T) {
	t.Parallel()
	const blob = "c2VjcmV0LWJsb2ItdGhhdC1pcy1sb25nLWVub3VnaC10by1iZS1hLWNyZWRlbnRpYWwtMTIzNDU2Nzg5MA"
	secrets := []string{"SECRETTOKEN123", "SECRETBEARER456", "SECRETKEY789", "hunter2pass", "SECRETCLIENT000", "sk-live-abcdefghijklmnop1234", blob}
	args, _ := json.Marshal(map[string]any{
		"id":      "1",
		"text":    "see https://api.example/x?access_token=SECRETTOKEN123&x=1 and sk-live-abcdefghijklmnop1234",
		"headers": map[string]any{"Authorization": "Bearer SECRETBEARER456", "X-Api-Key": "SECRETKEY789"},
		"config":  []any{map[string]any{"password": "hunter2pass"}, map[string]any{"client_secret": "SECRETCLIENT000"}},
		"api_key": blob,
	})
	w, _, _ := approvalWorld(t, time.Minute, bottest.WithLogLevel(-1))
	w.Model.Push(llmtest.Call("notes__add_note", string(args)), llmtest.TextReport("Done."))
	ts := w.Slack.Mention(channel, asker, "add")
	m := awaitApproval(w, ts, 1)
	click(t, w, m, asker, "slackbot_deny", "")
	w.Answered(channel, ts, "Done.")
	var recs []state.SessionRecord
	w.Eventually("the session's record", func() bool {
		recs, _ = w.Store.Sessions(context.Background(), state.SessionFilter{})
		return len(recs) == 1 && len(recs[0].Approvals) == 1
	})
	rec, _ := json.Marshal(recs[0])
	var logs strings.Builder
	for _, e := range w.Logs.All() {
		logs.WriteString(e.Message)
		for k, v := range e.ContextMap() {
			logs.WriteString(" " + k + "=" + strings.ReplaceAll(strings.ReplaceAll(toString(v), "\n", " "), "\t", " "))
		}
		logs.WriteString("\n")
	}
	for _, s := range secrets {
		if strings.Contains(blocksText(m), s) {
			t.Errorf("the approval message shows %q: %s", s, blocksText(m))
		}
		if strings.Contains(logs.String(), s) {
			t.Errorf("the logs hold %q", s)
		}
		if strings.Contains(string(rec), s) {
			t.Errorf("the session record holds %q", s)
		}
	}
}

func toString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
