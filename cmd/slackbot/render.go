package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"strings"

	"github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit"
	bkhtml "github.com/slackbot/slackbot/blockkit/html"
)

const renderUsage = `usage: slackbot render [--input markdown|report] [--builder-url] [--html] < FILE

Reads FILE from standard input and prints the Slack messages the bot would
post, as an indented JSON array of {"text": …, "blocks": […]} objects.

  --input markdown  FILE is Markdown (the default): it is converted the way
                    report_content is (blockkit.FromMarkdown).
  --input report    FILE is the JSON arguments object of an
                    agent__final_report call in slack-block-kit format; its
                    "messages" are repaired (blockkit.RepairReport) and each
                    repair is printed to standard error, one per line, as
                    "repair: PATH: KIND: DETAIL".
  --builder-url     also print, for each message, a Slack Block Kit Builder
                    link to standard error ("builder: N/M: URL"), so that
                    standard output stays valid JSON.
  --html            print a standalone HTML page drawing the messages the
                    way Slack shows them, instead of the JSON.

Examples:
  slackbot render < answer.md | jq '.[0].blocks | length'
  slackbot render --input report --builder-url < final_report.json
  slackbot render --html < answer.md > answer.html
`

// builderBase is the Block Kit Builder page; the payload goes in the fragment.
const builderBase = "https://app.slack.com/block-kit-builder/#"

// runRender implements "slackbot render": it shows what the bot would post
// for a Markdown answer or a model's final_report, without Slack.
func runRender(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), renderUsage) }
	input := fs.String("input", "markdown", "what standard input holds: markdown or report")
	builder := fs.Bool("builder-url", false, "print a Block Kit Builder link per message to standard error")
	asHTML := fs.Bool("html", false, "print a standalone HTML page of the messages instead of JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		// flag has printed the problem and the usage already.
		return fmt.Errorf("render: %w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return renderUsageError(stderr, fmt.Sprintf("unexpected argument %q: the input is read from standard input", fs.Arg(0)))
	}
	data, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("render: reading standard input: %w", err)
	}

	var msgs []blockkit.Message
	switch *input {
	case "markdown":
		msgs = blockkit.FromMarkdown(string(data))
	case "report":
		var changes []blockkit.Change
		msgs, changes, err = blockkit.RepairReport(data)
		if err != nil {
			return fmt.Errorf("render: --input report needs the JSON object of a final_report call's arguments: %w", err)
		}
		for _, c := range changes {
			fmt.Fprintln(stderr, "repair: "+c.String())
		}
	default:
		return renderUsageError(stderr, fmt.Sprintf("--input must be markdown or report, not %q", *input))
	}
	if msgs == nil {
		msgs = []blockkit.Message{}
	}

	var out bytes.Buffer
	if *asHTML {
		if err := renderPage(&out, msgs); err != nil {
			return fmt.Errorf("render: drawing HTML: %w", err)
		}
	} else {
		data, err = json.Marshal(msgs)
		if err != nil {
			return fmt.Errorf("render: encoding messages: %w", err)
		}
		if err := json.Indent(&out, unescapeHTML(data), "", "  "); err != nil {
			return fmt.Errorf("render: indenting messages: %w", err)
		}
		out.WriteByte('\n')
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		return fmt.Errorf("render: writing output: %w", err)
	}

	if *builder {
		for i, m := range msgs {
			link, err := builderURL(m)
			if err != nil {
				return fmt.Errorf("render: builder link for message %d: %w", i+1, err)
			}
			fmt.Fprintf(stderr, "builder: %d/%d: %s\n", i+1, len(msgs), link)
		}
	}
	return nil
}

// renderPage writes an HTML page drawing msgs.
func renderPage(w io.Writer, msgs []blockkit.Message) error {
	drawn := make([]template.HTML, 0, len(msgs))
	for _, m := range msgs {
		var blocks []byte
		if len(m.Blocks) > 0 {
			var err error
			if blocks, err = json.Marshal(slack.Blocks{BlockSet: m.Blocks}); err != nil {
				return err
			}
		}
		drawn = append(drawn, bkhtml.Message(blocks, m.Text))
	}
	return bkhtml.Page(w, "slackbot render", drawn)
}

// renderUsageError reports a usage mistake with the usage text; main exits 2
// on errUsage without printing anything more.
func renderUsageError(stderr io.Writer, msg string) error {
	fmt.Fprintf(stderr, "slackbot render: %s\n\n%s", msg, renderUsage)
	return fmt.Errorf("render: %w: %s", errUsage, msg)
}

// builderURL returns the Block Kit Builder link that previews m's blocks.
func builderURL(m blockkit.Message) (string, error) {
	payload := struct {
		Blocks slack.Blocks `json:"blocks"`
	}{slack.Blocks{BlockSet: m.Blocks}}
	if m.Blocks == nil {
		payload.Blocks.BlockSet = []slack.Block{}
	}
	data, err := json.Marshal(payload)
	if err != nil {
		return "", err
	}
	// Escape everything but letters, digits and -_.~ ; a space must be %20,
	// since the Builder reads the fragment with decodeURIComponent, which
	// leaves QueryEscape's "+" a plus.
	return builderBase + strings.ReplaceAll(url.QueryEscape(string(unescapeHTML(data))), "+", "%20"), nil
}

// unescapeHTML turns the \u003c, \u003e and \u0026 that encoding/json writes
// for <, > and & back into the characters, so that mrkdwn reads as it is
// sent. Both forms are the same JSON; an escaped backslash before "u003c"
// is left alone.
func unescapeHTML(data []byte) []byte {
	if !bytes.Contains(data, []byte(`\u00`)) {
		return data
	}
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' || i+1 >= len(data) {
			out = append(out, data[i])
			continue
		}
		if data[i+1] == 'u' && i+6 <= len(data) {
			switch string(data[i+2 : i+6]) {
			case "003c":
				out = append(out, '<')
				i += 5
				continue
			case "003e":
				out = append(out, '>')
				i += 5
				continue
			case "0026":
				out = append(out, '&')
				i += 5
				continue
			}
		}
		// Any other escape: copy it whole so its backslash is not re-read.
		out = append(out, data[i], data[i+1])
		i++
	}
	return out
}
