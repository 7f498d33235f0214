package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

func TestAnUploadIsSharedInTheThreadAsAMessageWithTheFile(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	ctx := context.Background()
	root := srv.Mention("C1", "U1", "<@U0BOT> report please")
	data := "# Report\n\n" + strings.Repeat("a line of the report\n", 100)
	f, err := api.UploadFileContext(ctx, slack.UploadFileParameters{
		Filename: "answer.md", Title: "Answer", Content: data, FileSize: len(data),
		Channel: "C1", ThreadTimestamp: root, InitialComment: "the whole answer",
	})
	if err != nil {
		t.Fatal(err)
	}
	ups := srv.Uploads("C1")
	if len(ups) != 1 || ups[0].ID != f.ID || ups[0].Name != "answer.md" || ups[0].Title != "Answer" ||
		string(ups[0].Data) != data || ups[0].ThreadTS != root || ups[0].Comment != "the whole answer" {
		t.Fatalf("Uploads = %+v, want answer.md titled Answer in the thread %s with the bytes sent", ups, root)
	}
	msgs, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: root})
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	if last.Timestamp != ups[0].TS || last.BotID != srv.BotID() || len(last.Files) != 1 ||
		last.Files[0].ID != f.ID || last.Files[0].Name != "answer.md" || last.Files[0].Size != len(data) || last.Text != "the whole answer" {
		t.Fatalf("the thread's last message = %+v, want the bot's message sharing answer.md", last)
	}
}

func TestUploadErrorsAreSlacks(t *testing.T) {
	t.Parallel()
	_, api := start(t, Options{})
	ctx := context.Background()
	reserve := func(length int) *slack.GetUploadURLExternalResponse {
		t.Helper()
		u, err := api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: "a.txt", FileSize: length})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	complete := func(id string) string {
		_, err := api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
			Files: []slack.FileSummary{{ID: id, Title: "a"}}, Channel: "C1"})
		return slackError(err)
	}
	post := func(url string, body []byte) int {
		t.Helper()
		resp, err := http.Post(url, "application/octet-stream", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	if got := complete("F999999"); got != "file_not_found" {
		t.Errorf("completing an unknown file: %q, want file_not_found", got)
	}
	u := reserve(5)
	if got := complete(u.FileID); got != "file_not_found" {
		t.Errorf("completing a file whose bytes never came: %q, want file_not_found", got)
	}
	if got := post(u.UploadURL, []byte("too long")); got != http.StatusBadRequest {
		t.Errorf("bytes of another length than declared: HTTP %d, want 400", got)
	}
	if got := post(u.UploadURL, []byte("12345")); got != http.StatusOK {
		t.Errorf("the declared bytes: HTTP %d, want 200", got)
	}
	if got := post(u.UploadURL, []byte("12345")); got != http.StatusBadRequest {
		t.Errorf("a second post: HTTP %d, want 400", got)
	}
	if _, err := api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
		Files: []slack.FileSummary{{ID: u.FileID}}, Channel: "C2"}); slackError(err) != "not_in_channel" {
		t.Errorf("sharing where the bot is not a member: %v, want not_in_channel", err)
	}
	if got := complete(u.FileID); got != "" {
		t.Errorf("completing an uploaded file: %q", got)
	}
	if got := complete(u.FileID); got != "file_not_found" {
		t.Errorf("completing it twice: %q, want file_not_found", got)
	}
	if _, err := api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: "a.txt", FileSize: MaxUploadBytes + 1}); slackError(err) != "file_too_large" {
		t.Errorf("a file over Slack's limit: %v, want file_too_large", err)
	}
}

func TestAnUploadNeedsFilesWriteAndAnswersListTheScopes(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, Options{})
	var scopes string
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL()),
		slack.OptionOnResponseHeaders(func(_ string, h http.Header) { scopes = h.Get("X-OAuth-Scopes") }))
	if _, err := api.AuthTest(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(scopes, ","); !slices.Contains(got, "files:write") || !slices.Contains(got, "chat:write") {
		t.Fatalf("X-OAuth-Scopes = %q, want the default scopes", scopes)
	}
	srv.SetScopes("chat:write", "files:read")
	if _, err := api.AuthTest(); err != nil || scopes != "chat:write,files:read" {
		t.Fatalf("X-OAuth-Scopes after SetScopes = %q (%v)", scopes, err)
	}
	_, err := api.GetUploadURLExternalContext(context.Background(), slack.GetUploadURLExternalParameters{FileName: "a.txt", FileSize: 3})
	if slackError(err) != "missing_scope" {
		t.Fatalf("files.getUploadURLExternal without files:write: %v, want missing_scope", err)
	}
	calls := srv.Calls("files.getUploadURLExternal")
	if len(calls) != 1 || calls[0].Error != "missing_scope" {
		t.Fatalf("calls = %+v", calls)
	}
}

func TestASharedUploadIsDeliveredAsAFileShareEvent(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	if _, err := api.UploadFileContext(context.Background(), slack.UploadFileParameters{
		Filename: "t.csv", Content: "a,b\n", FileSize: 4, Channel: "C1"}); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	found := false
	for _, e := range srv.queue { // no socket is connected: every event waits
		var p struct {
			Event struct {
				Subtype string `json:"subtype"`
				Files   []struct{ Name string }
			} `json:"event"`
		}
		if json.Unmarshal(e.payload, &p) == nil && p.Event.Subtype == "file_share" && len(p.Event.Files) == 1 && p.Event.Files[0].Name == "t.csv" {
			found = true
		}
	}
	if !found {
		t.Fatal("no file_share message event carrying t.csv was queued")
	}
}

func TestASharedUploadIsAFileLikeAnAttachedOne(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	ctx := context.Background()
	root := srv.Mention("C1", "U1", "<@U0BOT> report please")
	attached := srv.AddFile(NewFile{Name: "notes.md", Mimetype: "text/markdown", User: "U1", Data: []byte("# notes\n")})
	srv.Share("C1", root, "U1", "and my notes", attached)
	data := "# Report\n\nthe whole of it\n"
	f, err := api.UploadFileContext(ctx, slack.UploadFileParameters{
		Filename: "answer.md", Title: "Answer", Content: data, FileSize: len(data), Channel: "C1", ThreadTimestamp: root,
	})
	if err != nil {
		t.Fatal(err)
	}

	info, _, _, err := api.GetFileInfo(f.ID, 0, 0)
	if err != nil {
		t.Fatalf("files.info of the upload: %v", err)
	}
	if info.Name != "answer.md" || info.Title != "Answer" || info.User != srv.BotUserID() || info.Size != len(data) ||
		info.Mimetype != "text/markdown" || !strings.HasPrefix(info.URLPrivateDownload, srv.URL()+"/files-pri/") {
		t.Fatalf("files.info = %+v, want answer.md by the bot on the emulator's file host", info)
	}
	var got bytes.Buffer
	if err := api.GetFile(info.URLPrivateDownload, &got); err != nil || got.String() != data {
		t.Fatalf("download with the bot token: %q, %v; want the uploaded bytes", got.String(), err)
	}
	resp, err := http.Get(info.URLPrivateDownload)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "the whole of it") {
		t.Fatalf("a download without the token got the upload's bytes: %q", body)
	}

	msgs, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: root})
	if err != nil {
		t.Fatal(err)
	}
	var shapes []map[string]bool
	for _, m := range msgs {
		for _, file := range m.Files {
			shapes = append(shapes, map[string]bool{"id": file.ID != "", "name": file.Name != "", "mimetype": file.Mimetype != "",
				"filetype": file.Filetype != "", "pretty_type": file.PrettyType != "", "user": file.User != "", "size": file.Size > 0,
				"url_private": file.URLPrivate != "", "url_private_download": file.URLPrivateDownload != "", "hosted": file.Mode == "hosted"})
		}
	}
	if len(shapes) != 2 || !maps.Equal(shapes[0], shapes[1]) || slices.Contains(slices.Collect(maps.Values(shapes[1])), false) {
		t.Fatalf("files[] of the attached file and of the upload = %v, want both complete and alike", shapes)
	}
}
