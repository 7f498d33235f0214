package attach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slackbot/slackbot/redact"
)

// Fetcher downloads attached files from Slack with the bot token. The token
// is sent only to Hosts: a URL on another host is refused before any
// request, and so is every redirect hop that leaves them, so the token
// never reaches another host. Plain http is refused except to loopback
// addresses (the emulator). Reading stops at MaxBytes.
type Fetcher struct {
	// Token is the bot token (files:read).
	Token string
	// Hosts are the host names the token may be sent to, matched exactly
	// (files.slack.com; the emulator's host in tests).
	Hosts []string
	// MaxBytes is the largest file read.
	MaxBytes int64
	// Timeout bounds one download (default DefaultFetchTimeout).
	Timeout time.Duration
	// Transport makes the requests (default: a clone of
	// http.DefaultTransport, made once).
	Transport http.RoundTripper

	once sync.Once
	rt   http.RoundTripper
}

// DefaultFetchTimeout bounds a download when Fetcher.Timeout is not set.
const DefaultFetchTimeout = 60 * time.Second

// maxRedirects bounds the hops of one download.
const maxRedirects = 5

// Errors of Fetch, for errors.Is.
var (
	ErrHostNotAllowed = errors.New("the file is not on Slack's file host")
	ErrTooLarge       = errors.New("the file is over the size limit")
	ErrSignIn         = errors.New("the download got Slack's sign-in page instead of the file: the bot token lacks the files:read scope, or the file is not shared where the bot is")
)

// Fetch downloads the file at rawURL (a url_private_download).
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("attach: the file's URL cannot be read: %w", err)
	}
	if err := f.allowed(u); err != nil {
		return nil, err
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("attach: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+f.Token)
	client := &http.Client{Transport: f.transport(), CheckRedirect: func(next *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("attach: more than %d redirects", maxRedirects)
		}
		// Checked before the hop is made: a hop to another host is never
		// sent, with or without the token.
		return f.allowed(next.URL)
	}}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, ErrHostNotAllowed) {
			return nil, refusedHop(err)
		}
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("attach: the download took longer than %s", timeout)
		}
		return nil, fmt.Errorf("attach: downloading the file: %w", scrub(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("attach: Slack answered %s to the download", resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" && resp.Request.URL.Path != u.Path {
		// A redirect to a page instead of the file: Slack's sign-in.
		return nil, ErrSignIn
	}
	if resp.ContentLength > f.MaxBytes {
		return nil, fmt.Errorf("%w (%s, the limit is %s)", ErrTooLarge, FormatSize(resp.ContentLength), FormatSize(f.MaxBytes))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, f.MaxBytes+1))
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("attach: the download took longer than %s", timeout)
		}
		return nil, fmt.Errorf("attach: reading the file: %w", scrub(err))
	}
	if int64(len(data)) > f.MaxBytes {
		return nil, fmt.Errorf("%w (the limit is %s)", ErrTooLarge, FormatSize(f.MaxBytes))
	}
	return data, nil
}

// refusedHop unwraps the client's *url.Error around a refused redirect, so
// the message says which host was refused and why.
func refusedHop(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}

// allowed checks a URL the token would be sent to.
func (f *Fetcher) allowed(u *url.URL) error {
	host := strings.ToLower(u.Hostname())
	if !slices.Contains(f.Hosts, host) {
		return fmt.Errorf("%w: %q is not one of the allowed file hosts (slack.files.hosts); the bot token is not sent there", ErrHostNotAllowed, host)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if ip := net.ParseIP(host); !(host == "localhost" || ip != nil && ip.IsLoopback()) {
			return fmt.Errorf("%w: %s is plain http; the bot token is only sent over https", ErrHostNotAllowed, host)
		}
	default:
		return fmt.Errorf("%w: %q is not an http(s) URL", ErrHostNotAllowed, u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("%w: the URL carries credentials of its own", ErrHostNotAllowed)
	}
	return nil
}

func (f *Fetcher) transport() http.RoundTripper {
	if f.Transport != nil {
		return f.Transport
	}
	f.once.Do(func() {
		f.rt = http.DefaultTransport
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			f.rt = t.Clone()
		}
	})
	return f.rt
}

// scrub removes anything shaped like a credential from a transport error,
// which may quote the request.
func scrub(err error) error {
	if s := redact.String(err.Error()); s != err.Error() {
		return errors.New(s)
	}
	return err
}
