package slack_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// A server's schema is the server's words: whatever it asks for, the form
// opens within Slack's modal limits (100 options a select, 2,000
// characters a label, 75 an option) and answers in the schema's terms.
func TestAnOversizedQuestionStillOpensAsAForm(t *testing.T) {
	t.Parallel()
	var values, titled []string
	for i := range 150 {
		values = append(values, fmt.Sprintf("v%03d", i))
		titled = append(titled, fmt.Sprintf(`{"const":"c%03d","title":"<!channel> option %03d %s"}`, i, i, strings.Repeat("x", 80)))
	}
	enum, _ := json.Marshal(values)
	long := strings.Repeat("<@U0BOSS> label ", 200)
	schema := fmt.Sprintf(`{"type":"object","properties":{
		"pick":  {"type":"string","title":%q,"description":%q,"enum":%s,"default":"v149"},
		"many":  {"type":"array","title":"Many","items":{"type":"string","enum":%s}},
		"named": {"type":"string","title":"Named","oneOf":[%s]}
	},"required":["pick"]}`, long, long, enum, enum, strings.Join(titled, ","))
	srv, orch := startAsking(t, "Pick one.", schema)
	w := bookingWorld(t, orch)
	ts := w.Slack.Mention(channel, asker, "book me a table")
	q := question(w, ts)
	v := openForm(w, q)
	if strings.Contains(string(v.JSON), `"mrkdwn"`) {
		t.Errorf("the server's words are mrkdwn in the form: %s", v.JSON)
	}
	if action, errs := submit(w, v, asker, map[string][]string{"field:named": {"nope"}}); action != "errors" || errs["field:named"] == "" {
		t.Fatalf("a typed value outside the choice was answered %q %v", action, errs)
	}
	if action, errs := submit(w, v, asker, map[string][]string{"field:named": {"c120"}, "field:many": {"v001\nv140\n"}}); action != "" || errs != nil {
		t.Fatalf("the form was answered %q %v", action, errs)
	}
	w.Answered(channel, ts, "Done with the booking.")
	got := srv.got()
	if len(got) != 1 || got[0].Action != mcpgo.ElicitationResponseActionAccept {
		t.Fatalf("the server got %+v", got)
	}
	b, _ := json.Marshal(got[0].Content)
	if want := `{"many":["v001","v140"],"named":"c120","pick":"v149"}`; string(b) != want {
		t.Fatalf("the server got %s, want %s", b, want)
	}
}
