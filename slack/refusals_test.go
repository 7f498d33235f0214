package slack

import "testing"

func TestARefusalToStreamIsRememberedForItsScope(t *testing.T) {
	t.Parallel()
	var r streamRefusals
	ada, bob := request{user: "U0ADA"}, request{user: "U0BOB"}
	r.remember("user_not_found", ada)
	if r.recent(ada) != "user_not_found" || r.recent(bob) != "" {
		t.Errorf("user_not_found is the asker's alone: ada %q, bob %q", r.recent(ada), r.recent(bob))
	}
	r.remember("not_allowed", ada)
	if r.recent(bob) != "not_allowed" {
		t.Errorf("not_allowed holds for the workspace; bob got %q", r.recent(bob))
	}
	if !r.firstTime("not_allowed") || r.firstTime("not_allowed") {
		t.Error("a reason is logged the first time only")
	}
	for _, code := range []string{"ratelimited", "internal_error", "timeout"} {
		if refusedStream(code) {
			t.Errorf("%s is a failure of the moment, not a refusal to remember", code)
		}
	}
}
