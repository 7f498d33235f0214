package slack_test

import (
	"bytes"
	"fmt"
	"image"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/testdoc"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/tools/tooloutput"
)

func TestAPictureAttachedToAMentionReachesTheModelOnBothWires(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ wire, format string }{
		{"openai", llmtest.FormatOpenAI},
		{"anthropic", llmtest.FormatAnthropic},
	} {
		t.Run(tt.wire, func(t *testing.T) {
			t.Parallel()
			model := llmtest.NewServer(t, llmtest.TextReport("A grey pattern."))
			w := bottest.Start(t, onWire(t, model, tt.wire, true)...)
			pic := pictureOf(t, 64, 48)
			f := w.Slack.AddFile(emulator.NewFile{Name: "screenshot.png", Mimetype: "image/png", User: asker, Data: pic})
			ts := w.Slack.Share(channel, "", asker, "<@"+w.Slack.BotUserID()+"> what is this?", f)
			thread := w.Answered(channel, ts, "grey pattern")

			r := model.Requests()[0]
			if r.Format != tt.format || r.Invalid != "" {
				t.Fatalf("the request went as %q (invalid: %q), want %q", r.Format, r.Invalid, tt.format)
			}
			user := lastUser(r)
			if len(user.Images) != 1 || user.Images[0].MediaType != "image/png" || !bytes.Equal(user.Images[0].Data, pic) {
				t.Fatalf("the user's turn carries %d images (%+v), want the PNG as it was attached", len(user.Images), user.Images)
			}
			if !strings.HasPrefix(user.Content, "what is this?") || !strings.Contains(user.Content, "screenshot.png") {
				t.Errorf("the user's turn is %q, want the question and the file named", user.Content)
			}
			if notes := noteIn(thread, "Attached files"); len(notes) != 0 {
				t.Errorf("a model that sees got a note in the thread: %q", notes)
			}
			if d := w.Slack.Downloads(); len(d) != 1 || d[0].Token != w.Slack.BotToken() || d[0].Status != 200 {
				t.Errorf("downloads = %+v, want one with the bot token", d)
			}
		})
	}
}

func TestAModelThatCannotSeeGetsTheNoteAndThePersonIsToldOnce(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t, llmtest.TextReport("I cannot see pictures."))
	w := bottest.Start(t, onWire(t, model, "openai", false)...)
	a := w.Slack.AddFile(emulator.NewFile{Name: "a.png", Mimetype: "image/png", User: asker, Data: pictureOf(t, 10, 10)})
	b := w.Slack.AddFile(emulator.NewFile{Name: "b.png", Mimetype: "image/png", User: asker, Data: pictureOf(t, 12, 12)})
	ts := w.Slack.Share(channel, "", asker, "<@"+w.Slack.BotUserID()+"> compare these", a, b)
	thread := w.Answered(channel, ts, "cannot see pictures")

	user := lastUser(model.Requests()[0])
	if len(user.Images) != 0 {
		t.Errorf("a model without vision was sent %d pictures", len(user.Images))
	}
	for _, name := range []string{"a.png", "b.png"} {
		if !strings.Contains(user.Content, "[The user attached an image you cannot see: "+name+"]") {
			t.Errorf("the model's turn lacks the note for %s: %q", name, user.Content)
		}
	}
	notes := noteIn(thread, "cannot see images")
	if len(notes) != 1 || strings.Count(notes[0], "cannot see images") != 1 {
		t.Errorf("the person was told %d times (%q), want once", len(notes), notes)
	}
}

func TestASixThousandPixelPictureIsScaledBeforeTheModelSeesIt(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t, llmtest.TextReport("A large pattern."))
	w := bottest.Start(t, onWire(t, model, "anthropic", true)...)
	f := w.Slack.AddFile(emulator.NewFile{Name: "big.png", Mimetype: "image/png", User: asker, Data: pictureOf(t, 6000, 6000)})
	ts := w.Slack.Share(channel, "", asker, "<@"+w.Slack.BotUserID()+"> what is this?", f)
	w.Answered(channel, ts, "large pattern")

	r := model.Requests()[0]
	if r.Invalid != "" {
		t.Fatalf("the service refused the request: %s", r.Invalid)
	}
	user := lastUser(r)
	if len(user.Images) != 1 {
		t.Fatalf("%d images on the wire, want 1", len(user.Images))
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(user.Images[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width > 1568 || cfg.Height > 1568 || cfg.Width < 1000 {
		t.Errorf("the picture reached the model at %d×%d, want it scaled to fit 1568 pixels", cfg.Width, cfg.Height)
	}
	if !strings.Contains(user.Content, "6000×6000 pixels, scaled to") {
		t.Errorf("the model is not told the picture was scaled: %q", user.Content)
	}
}

func TestAGeneratedPDFsTextReachesTheModel(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Push(llmtest.TextReport("Revenue grew."))
	f := w.Slack.AddFile(emulator.NewFile{Name: "q3.pdf", Mimetype: "application/pdf", User: asker, Data: testdoc.PDF(testdoc.Text("Quarterly revenue grew 12 percent"))})
	ts := w.Slack.Share(channel, "", asker, "<@"+w.Slack.BotUserID()+"> summarise", f)
	w.Answered(channel, ts, "Revenue grew")
	if got := lastUser(w.Model.Requests()[0]).Content; !strings.Contains(got, "Quarterly revenue grew 12 percent") || !strings.Contains(got, "q3.pdf") {
		t.Errorf("the model's turn lacks the PDF's text: %q", got)
	}
}

func TestTheFilesOfEveryKindOfQuestionReachTheModel(t *testing.T) {
	t.Parallel()
	const content = "alpha,beta\n1,2\n"
	for _, tt := range []struct {
		name string
		ask  func(w *bottest.World, f emulator.File) (ch, ts string)
	}{
		{"a mention with a file", func(w *bottest.World, f emulator.File) (string, string) {
			return channel, w.Slack.Share(channel, "", asker, "<@"+w.Slack.BotUserID()+"> sum the columns", f)
		}},
		{"a DM with a file", func(w *bottest.World, f emulator.File) (string, string) {
			return w.Slack.ShareDM(asker, "sum the columns", f)
		}},
		{"a file shared alone in a DM", func(w *bottest.World, f emulator.File) (string, string) {
			return w.Slack.ShareDM(asker, "", f)
		}},
		{"a follow-up in the bot's thread with a file", func(w *bottest.World, f emulator.File) (string, string) {
			w.Model.Push(llmtest.TextReport("Hello."))
			root := w.Slack.Mention(channel, asker, "hi")
			w.Answered(channel, root, "Hello")
			w.Slack.Share(channel, root, asker, "sum the columns", f)
			return channel, root
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := bottest.Start(t)
			f := w.Slack.AddFile(emulator.NewFile{Name: "data.csv", Mimetype: "text/csv", User: asker, Data: []byte(content)})
			ch, ts := tt.ask(w, f)
			w.Model.Push(llmtest.TextReport("The sum is 3."))
			w.Answered(ch, ts, "The sum is 3")
			reqs := w.Model.Requests()
			got := lastUser(reqs[len(reqs)-1]).Content
			if !strings.Contains(got, "data.csv") || !strings.Contains(got, content) {
				t.Errorf("the model's turn lacks the file: %q", got)
			}
		})
	}
}

func TestAFileOverTheLimitIsRefusedWithAClearMessage(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Push(llmtest.TextReport("I read your question."))
	big := w.Slack.AddFile(emulator.NewFile{Name: "dump.bin", User: asker, Data: make([]byte, 25<<20)})
	ts := w.Slack.Share(channel, "", asker, "<@"+w.Slack.BotUserID()+"> what is in it?", big)
	thread := w.Answered(channel, ts, "I read your question")

	notes := noteIn(thread, "dump.bin")
	if len(notes) != 1 || !strings.Contains(notes[0], "(25.0 MB) was not read: files over 20.0 MB are skipped.") {
		t.Errorf("the person was told %q, want one note naming the file, its size and the limit", notes)
	}
	if d := w.Slack.Downloads(); len(d) != 0 {
		t.Errorf("a file over the limit was downloaded: %+v", d)
	}
	if got := lastUser(w.Model.Requests()[0]).Content; got != "what is in it?" {
		t.Errorf("the model's turn is %q, want the question alone", got)
	}
}

func TestTheBotTokenNeverLeavesSlacksFileHost(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		file func(w *bottest.World, other *elsewhere) emulator.NewFile
	}{
		{"a download redirected to another host", func(w *bottest.World, other *elsewhere) emulator.NewFile {
			return emulator.NewFile{Name: "notes.txt", User: asker, Data: []byte("secret notes"), RedirectTo: other.url + "/steal"}
		}},
		{"a file whose url_private_download is on another host", func(w *bottest.World, other *elsewhere) emulator.NewFile {
			return emulator.NewFile{Name: "notes.txt", User: asker, Data: []byte("secret notes"), URLPrivateDownload: other.url + "/steal"}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			other := newElsewhere(t)
			w := bottest.Start(t)
			w.Model.Push(llmtest.TextReport("Answered without it."))
			f := w.Slack.AddFile(tt.file(w, other))
			ts := w.Slack.Share(channel, "", asker, "<@"+w.Slack.BotUserID()+"> read my notes", f)
			thread := w.Answered(channel, ts, "Answered without it")

			if seen := other.seen(); len(seen) != 0 {
				t.Fatalf("the other host got %d requests (Authorization %q)", len(seen), seen[0].Get("Authorization"))
			}
			notes := noteIn(thread, "notes.txt")
			if len(notes) != 1 || !strings.Contains(notes[0], "not on Slack") {
				t.Errorf("the person was told %q, want that the file is not on Slack's file host", notes)
			}
			if got := lastUser(w.Model.Requests()[0]).Content; strings.Contains(got, "stolen") || strings.Contains(got, "secret notes") {
				t.Errorf("the model got the file's content: %q", got)
			}
		})
	}
}

func TestAFileNameThatPingsOrLinksIsShownInertInTheNote(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Push(llmtest.TextReport("Done."))
	name := "<!channel> <@U0EVE> <https://evil.example|login> `x` *b* https://ev.il"
	f := w.Slack.AddFile(emulator.NewFile{Name: name, User: asker, Data: make([]byte, 21<<20)})
	ts := w.Slack.Share(channel, "", asker, "<@"+w.Slack.BotUserID()+"> look", f)
	thread := w.Answered(channel, ts, "Done")

	var note *emulator.Message
	for _, m := range bottest.BotMessages(thread) {
		if strings.Contains(bottest.MessageText(m), "was not read") {
			note = &m
		}
	}
	if note == nil {
		t.Fatal("no note on the skipped file")
	}
	text := bottest.MessageText(*note)
	for _, bad := range []string{"<!channel>", "<@U0EVE>", "<https://", "|login>"} {
		if strings.Contains(text, bad) {
			t.Errorf("the note carries %q live: %s", bad, text)
		}
	}
	if !strings.Contains(note.Text, "`&lt;!channel&gt; &lt;@U0EVE&gt; &lt;https://evil.example|login&gt; ʼxʼ *b* https://ev.il`") {
		t.Errorf("the name is not shown as escaped code: %s", note.Text)
	}
}

func TestAFileOfAnEarlierMessageIsFetchedByTheModelAndOnlyThisThreadsFiles(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) {
		c.Agents[bottest.AgentName].ToolOutput = config.ToolOutput{MaxBytes: 12288, MaxChunksForFullMode: 1, OverlapPercent: 10}
	}), bottest.WithRunner(func(r *agent.Runner) {
		run, err := tooloutput.OpenRun(t.TempDir(), zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = run.Close() })
		r.ToolOutput = run
	}))
	bot := "<@" + w.Slack.BotUserID() + "> "
	// Another thread's file, which this thread must not reach.
	secret := w.Slack.AddFile(emulator.NewFile{Name: "salaries.csv", Mimetype: "text/csv", User: "U0EVE", Data: []byte("eve,1000000\n")})
	w.Model.Push(llmtest.TextReport("Noted."))
	other := w.Slack.Share(channel, "", "U0EVE", bot+"keep this", secret)
	w.Answered(channel, other, "Noted")

	logText, needle := testdoc.FiveMegabyteLog()
	f := w.Slack.AddFile(emulator.NewFile{Name: "payments.log", Mimetype: "text/plain", User: asker, Data: []byte(logText)})
	w.Model.Push(llmtest.TextReport("Got the log."))
	root := w.Slack.Share(channel, "", asker, bot+"here is the log", f)
	w.Answered(channel, root, "Got the log")
	downloads := len(w.Slack.Downloads())
	reqs := w.Model.Requests()
	if attached := lastUser(reqs[len(reqs)-1]).Content; !attachmentHandle.MatchString(attached) || len(attached) > 4096 {
		t.Errorf("the 5 MB log attached to the question did not become a handle: %.300q", attached)
	}

	var firstTurn, refusal, fetched, grepped string
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if reply, ok := readGrepAgent(r, &grepped, func(string) string {
			return "ERROR at 12:00: payment gateway timed out for order 4242."
		}); ok {
			return reply
		}
		res := toolResultsOf(r)
		switch len(res) {
		case 0:
			firstTurn = lastUser(r).Content
			return llmtest.Call(slack.FetchFileTool, argsOf(map[string]any{"file_id": secret.ID}))
		case 1:
			refusal = res[0].Content
			return llmtest.Call(slack.FetchFileTool, argsOf(map[string]any{"file_id": f.ID}))
		case 2:
			fetched = res[1].Content
			return grepFetched(fetched)
		}
		return llmtest.TextReport("The payment gateway timed out for order 4242.")
	})
	w.Slack.Reply(channel, root, asker, "why did order 4242 fail?")
	w.Answered(channel, root, "timed out for order 4242")

	var history string
	for _, m := range w.Model.Requests() {
		if !strings.Contains(m.System, "Read and Grep") && len(toolResultsOf(m)) == 0 && slices.Contains(m.ToolNames, slack.FetchFileTool) {
			for _, msg := range m.Messages {
				history += msg.Content + "\n"
			}
		}
	}
	if want := "[File " + f.ID + " shared by ada: payments.log, text/plain, 5.0 MB; read it with " + slack.FetchFileTool + "]"; !strings.Contains(history, want) {
		t.Errorf("the history does not list the file as %q:\n%.2000s", want, history)
	}
	if firstTurn != "why did order 4242 fail?" {
		t.Errorf("the question reached the model as %q", firstTurn)
	}
	if !strings.Contains(refusal, "is not a file of this thread") || strings.Contains(refusal, "1000000") {
		t.Errorf("another thread's file was answered with %q, want a refusal", refusal)
	}
	for _, d := range w.Slack.Downloads()[downloads:] {
		if d.FileID == secret.ID {
			t.Errorf("another thread's file was downloaded: %+v", d)
		}
	}
	if !strings.Contains(fetched, "tool_output(handle") {
		t.Errorf("the fetched log did not become a handle: %.300s", fetched)
	}
	if !strings.Contains(grepped, needle) {
		t.Errorf("Grep answered %.300q, want the line from the middle of the log", grepped)
	}
	for _, e := range w.Logs.All() {
		line := e.Message + fmt.Sprint(e.ContextMap())
		if strings.Contains(line, "payment gateway") || strings.Contains(line, "served in 12ms") || strings.Contains(line, "payments.log") {
			t.Errorf("a log line carries the file's name or content: %.300s", line)
		}
	}
}

var (
	attachmentHandle = regexp.MustCompile(`tool_output\(handle = "([0-9a-f-]{36})"`)
	readGrepHandle   = regexp.MustCompile(`Handle/filename: (\S+)`)
)
