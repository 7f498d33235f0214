package emulator

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

func TestAnAttachedFileIsDescribedAndServedOnlyToTheBotToken(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	data := []byte("line one\nline two\n")
	f := srv.AddFile(NewFile{Name: "build log.txt", Mimetype: "text/plain", User: "U1", Data: data})
	if f.Size != len(data) || f.Filetype != "txt" || !strings.HasPrefix(f.URLPrivateDownload, srv.URL()+"/files-pri/T0EMULATOR-"+f.ID+"/download/") {
		t.Fatalf("file = %+v", f)
	}

	info, _, _, err := api.GetFileInfo(f.ID, 0, 0)
	if err != nil {
		t.Fatalf("files.info: %v", err)
	}
	if info.ID != f.ID || info.Name != "build log.txt" || info.Size != len(data) || info.URLPrivateDownload != f.URLPrivateDownload {
		t.Errorf("files.info = %+v", info)
	}
	if _, _, _, err := api.GetFileInfo("F404", 0, 0); slackError(err) != "file_not_found" {
		t.Errorf("files.info of an unknown file: %v, want file_not_found", err)
	}

	var got bytes.Buffer
	if err := api.GetFile(f.URLPrivateDownload, &got); err != nil {
		t.Fatalf("download with the bot token: %v", err)
	}
	if !bytes.Equal(got.Bytes(), data) {
		t.Errorf("downloaded %q, want %q", got.Bytes(), data)
	}

	for name, token := range map[string]string{"no token": "", "another token": "xoxb-other"} {
		req, _ := http.NewRequest(http.MethodGet, f.URLPrivateDownload, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if bytes.Contains(body, data) || !strings.Contains(string(body), "Sign in") || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: got %s %q, want the sign-in page", name, resp.Header.Get("Content-Type"), body)
		}
	}
	downloads := srv.Downloads()
	if len(downloads) != 3 || downloads[0].Token != srv.BotToken() || downloads[0].Status != http.StatusOK ||
		downloads[1].Status != http.StatusFound || downloads[2].Status != http.StatusFound {
		t.Errorf("downloads = %+v", downloads)
	}
}

func TestASharedMessageShowsItsFilesInTheThread(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	f := srv.AddFile(NewFile{Name: "a.csv", Mimetype: "text/csv", User: "U1", Data: []byte("a,b\n1,2\n")})
	root := srv.Share("C1", "", "U1", "numbers", f)
	msgs, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: root})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || len(msgs[0].Files) != 1 || msgs[0].Files[0].ID != f.ID || msgs[0].Files[0].Name != "a.csv" {
		t.Fatalf("replies = %+v", msgs)
	}
}

func TestADownloadCanBeRedirected(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, Options{})
	f := srv.AddFile(NewFile{Name: "x.png", Data: []byte("x"), RedirectTo: "http://elsewhere.invalid/x.png"})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, f.URLPrivateDownload, nil)
	req.Header.Set("Authorization", "Bearer "+srv.BotToken())
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "http://elsewhere.invalid/x.png" {
		t.Fatalf("got %s to %q, want a redirect to the other host", resp.Status, resp.Header.Get("Location"))
	}
}

func TestAFileNamedToClimbDirectoriesStaysUnderItsOwnAddress(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	data := []byte("root:x:0:0\n")
	f := srv.AddFile(NewFile{Name: "../../etc/passwd", Mimetype: "text/plain", User: "U1", Data: data})
	prefix := srv.URL() + "/files-pri/T0EMULATOR-" + f.ID + "/download/"
	if !strings.HasPrefix(f.URLPrivateDownload, prefix) || strings.Contains(strings.TrimPrefix(f.URLPrivateDownload, prefix), "/") {
		t.Fatalf("url_private_download = %q, want the name escaped under %s", f.URLPrivateDownload, prefix)
	}
	var got bytes.Buffer
	if err := api.GetFile(f.URLPrivateDownload, &got); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("download: %q, %v", got.Bytes(), err)
	}
}
