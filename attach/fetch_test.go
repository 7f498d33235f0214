package attach_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slackbot/slackbot/attach"
)

const botToken = "xoxb-test-1234-SECRET"

// host is a loopback HTTP server on its own address that records the
// Authorization header of every request it receives.
type host struct {
	srv  *httptest.Server
	mu   sync.Mutex
	auth []string
}

func newHost(t *testing.T, addr string, h http.HandlerFunc) *host {
	t.Helper()
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	s := &host{}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		h(w, r)
	}))
	s.srv.Listener = ln
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

func (s *host) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

func fetcher(maxBytes int64) *attach.Fetcher {
	return &attach.Fetcher{Token: botToken, Hosts: []string{"127.0.0.1"}, MaxBytes: maxBytes, Timeout: 10 * time.Second}
}

func TestTheBotTokenGoesToSlacksFileHostAndTheFileComesBack(t *testing.T) {
	t.Parallel()
	slack := newHost(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+botToken {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		if r.URL.Path == "/files-pri/T1-F1/download/old.txt" {
			http.Redirect(w, r, "/files-pri/T1-F1/download/report.txt", http.StatusFound) // same host: followed
			return
		}
		_, _ = w.Write([]byte("the report"))
	})
	data, err := fetcher(1<<20).Fetch(context.Background(), slack.srv.URL+"/files-pri/T1-F1/download/old.txt")
	if err != nil || string(data) != "the report" {
		t.Fatalf("Fetch = %q, %v", data, err)
	}
	if got := slack.seen(); len(got) != 2 || got[1] != "Bearer "+botToken {
		t.Fatalf("Slack saw %q, want the token on both hops", got)
	}
}

func TestARedirectToAnotherHostFailsAndThatHostNeverSeesTheToken(t *testing.T) {
	t.Parallel()
	evil := newHost(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("stolen")) })
	for _, status := range []int{http.StatusFound, http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		slack := newHost(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, evil.srv.URL+"/collect", status)
		})
		_, err := fetcher(1<<20).Fetch(context.Background(), slack.srv.URL+"/files-pri/T1-F1/download/x.png")
		if !errors.Is(err, attach.ErrHostNotAllowed) || !strings.Contains(err.Error(), `"127.0.0.2" is not one of the allowed file hosts`) {
			t.Fatalf("redirect %d: err = %v, want a refusal naming 127.0.0.2", status, err)
		}
		if strings.Contains(err.Error(), botToken) {
			t.Fatalf("the error carries the token: %v", err)
		}
	}
	for _, a := range evil.seen() {
		if a != "" {
			t.Fatalf("the other host saw Authorization %q", a)
		}
	}
	if n := len(evil.seen()); n != 0 {
		t.Fatalf("the other host was sent %d requests; the hop should never be made", n)
	}
}

func TestAURLOnAnotherHostIsRefusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	evil := newHost(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {})
	for _, u := range []string{
		evil.srv.URL + "/files-pri/x",
		"http://files.slack.com/files-pri/x",      // plain http to a real host
		"https://127.0.0.1@127.0.0.2/files-pri/x", // the allowed host as a user name
		"ftp://127.0.0.1/x",
	} {
		f := fetcher(1 << 20)
		f.Hosts = append(f.Hosts, "files.slack.com")
		if _, err := f.Fetch(context.Background(), u); !errors.Is(err, attach.ErrHostNotAllowed) {
			t.Errorf("Fetch(%s) = %v, want ErrHostNotAllowed", u, err)
		}
	}
	if n := len(evil.seen()); n != 0 {
		t.Fatalf("the other host was sent %d requests", n)
	}
}

func TestReadingStopsAtTheSizeLimit(t *testing.T) {
	t.Parallel()
	sent := make(chan int, 1)
	slack := newHost(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		// No Content-Length: the limit must hold while reading.
		chunk := []byte(strings.Repeat("x", 64<<10))
		n := 0
		for n < 100<<20 {
			if _, err := w.Write(chunk); err != nil {
				break
			}
			n += len(chunk)
			w.(http.Flusher).Flush()
		}
		sent <- n
	})
	_, err := fetcher(1<<20).Fetch(context.Background(), slack.srv.URL+"/files-pri/big")
	if !errors.Is(err, attach.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if n := <-sent; n >= 100<<20 {
		t.Fatalf("the whole 100 MB was sent; the download should stop early")
	}
}

func TestADeclaredLengthOverTheLimitIsRefusedUnread(t *testing.T) {
	t.Parallel()
	slack := newHost(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "26214400")
		_, _ = w.Write([]byte("x"))
	})
	_, err := fetcher(20<<20).Fetch(context.Background(), slack.srv.URL+"/files-pri/huge")
	if !errors.Is(err, attach.ErrTooLarge) || !strings.Contains(err.Error(), "25.0 MB, the limit is 20.0 MB") {
		t.Fatalf("err = %v, want ErrTooLarge naming 25.0 MB and the 20.0 MB limit", err)
	}
}

func TestADownloadThatHangsEndsAtItsTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	slack := newHost(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	f := fetcher(1 << 20)
	f.Timeout = 100 * time.Millisecond
	_, err := f.Fetch(context.Background(), slack.srv.URL+"/files-pri/slow")
	if err == nil || !strings.Contains(err.Error(), "took longer than 100ms") {
		t.Fatalf("err = %v, want the timeout named", err)
	}
}

func TestSlacksSignInPageIsNotTakenForTheFile(t *testing.T) {
	t.Parallel()
	slack := newHost(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/signin" {
			http.Redirect(w, r, "/signin", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html>Sign in to Slack</html>"))
	})
	_, err := fetcher(1<<20).Fetch(context.Background(), slack.srv.URL+"/files-pri/T1-F1/download/a.txt")
	if !errors.Is(err, attach.ErrSignIn) || !strings.Contains(err.Error(), "files:read") {
		t.Fatalf("err = %v, want ErrSignIn naming files:read", err)
	}
}
