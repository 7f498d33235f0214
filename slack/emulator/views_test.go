package emulator

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/slack-go/slack"
)

// trigger issues a trigger_id for user, as a click would.
func (s *Server) testTrigger(user string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newTrigger(user)
}

func modal() slack.ModalViewRequest {
	text := slack.NewTextBlockObject(slack.PlainTextType, "Guests", false, false)
	num := slack.NewNumberInputBlockElement(nil, "value", false)
	num.InitialValue = "2"
	sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, nil, "value",
		slack.NewOptionBlockObject("w", slack.NewTextBlockObject(slack.PlainTextType, "Window", false, false), nil),
		slack.NewOptionBlockObject("b", slack.NewTextBlockObject(slack.PlainTextType, "Bar", false, false), nil))
	sel.InitialOption = sel.Options[0]
	return slack.ModalViewRequest{Type: slack.VTModal, Title: slack.NewTextBlockObject(slack.PlainTextType, "Answer", false, false),
		Submit: slack.NewTextBlockObject(slack.PlainTextType, "Submit", false, false), CallbackID: "cb", PrivateMetadata: "meta",
		NotifyOnClose: true,
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewInputBlock("guests", text, nil, num),
			slack.NewInputBlock("table", slack.NewTextBlockObject(slack.PlainTextType, "Table", false, false), nil, sel),
		}}}
}

func TestAViewOpensOnceWithAFreshTriggerAndNeverWithAnExpiredOne(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	ctx := context.Background()
	trig := srv.testTrigger("U1")
	v, err := api.OpenViewContext(ctx, trig, modal())
	if err != nil {
		t.Fatal(err)
	}
	open := srv.Views()
	if len(open) != 1 || open[0].ID != v.ID || open[0].User != "U1" || open[0].PrivateMetadata != "meta" || len(open[0].Blocks) != 2 {
		t.Fatalf("open views %+v", open)
	}
	if _, err := api.OpenViewContext(ctx, trig, modal()); slackError(err) != "expired_trigger_id" {
		t.Errorf("a used trigger: %v", err)
	}
	late := srv.testTrigger("U1")
	srv.ExpireTriggers()
	if _, err := api.OpenViewContext(ctx, late, modal()); slackError(err) != "expired_trigger_id" {
		t.Errorf("a trigger older than three seconds: %v", err)
	}
	if _, err := api.OpenViewContext(ctx, "trigger.made-up", modal()); slackError(err) != "invalid_trigger_id" {
		t.Errorf("a trigger never issued: %v", err)
	}
	bad := modal()
	bad.Submit = nil // input blocks without a submit button
	if _, err := api.OpenViewContext(ctx, srv.testTrigger("U1"), bad); err == nil {
		t.Error("a modal with inputs and no submit button opened")
	}
	long := modal()
	long.Title = slack.NewTextBlockObject(slack.PlainTextType, "A title longer than Slack allows", false, false)
	if _, err := api.OpenViewContext(ctx, srv.testTrigger("U1"), long); err == nil {
		t.Error("a modal with a title over 24 characters opened")
	}
}

func TestASubmissionCarriesTheStateInSlackGosShape(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	v, err := api.OpenViewContext(context.Background(), srv.testTrigger("U1"), modal())
	if err != nil {
		t.Fatal(err)
	}
	env, err := srv.SubmitView(v.ID, "U1", map[string][]string{"table": {"b"}})
	if err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	payload := srv.envelopes[env].payload
	srv.mu.Unlock()
	var cb slack.InteractionCallback
	if err := json.Unmarshal(payload, &cb); err != nil {
		t.Fatal(err)
	}
	st := cb.View.State.Values
	if cb.Type != slack.InteractionTypeViewSubmission || cb.View.ID != v.ID || cb.View.PrivateMetadata != "meta" || cb.User.ID != "U1" ||
		st["guests"]["value"].Value != "2" || st["table"]["value"].SelectedOption.Value != "b" {
		t.Fatalf("submission %+v", cb)
	}
	if err := srv.CloseView(v.ID); err != nil {
		t.Fatal(err)
	}
	if len(srv.Views()) != 0 {
		t.Fatal("a closed view is still open")
	}
	if _, err := srv.SubmitView(v.ID, "U1", nil); err != ErrNoSuchView {
		t.Fatalf("a closed view was submitted: %v", err)
	}
}
