package redact_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slackbot/slackbot/redact"
)

// secretURL is the path and query every request below carries: a method
// name worth keeping and a token that must never show.
const secretURL = "/api/chat.postMessage?token=xoxb-111-222-SECRETabc&team=T1"

// leaks are what no word of an error may hold: the loopback address, the
// query and the credentials of secretURL and of a URL's userinfo.
var leaks = []string{"127.0.0.1", "10.1.2.3", "SECRET", "pa55word", "internal.example", "?", "team"}

// closedAddr is the address of a port nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// post sends a request to base+secretURL with client and returns its
// error, which must quote the URL for the test to prove anything.
func post(t *testing.T, client *http.Client, base string) error {
	t.Helper()
	resp, err := client.Post(base+secretURL, "application/json", strings.NewReader("{}"))
	if err == nil {
		_ = resp.Body.Close()
		t.Fatal("the request succeeded")
	}
	if !strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("the raw error quotes neither the token nor the address, so this proves nothing: %v", err)
	}
	return err
}

func TestAnErrorInWordsSaysWhatFailedAndNeverWhere(t *testing.T) {
	t.Parallel()
	hung := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(hung) })
	hangUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(hangUp.Close)
	selfSigned := httptest.NewUnstartedServer(http.NotFoundHandler())
	selfSigned.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	selfSigned.StartTLS()
	t.Cleanup(selfSigned.Close)

	plain := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	cases := []struct {
		name, cause string
		network     bool // Network names it too
		err         func(t *testing.T) error
	}{
		{"a refused connection", "connection refused", true, func(t *testing.T) error {
			return post(t, plain, "http://user:pa55word@"+closedAddr(t))
		}},
		{"a host name that does not resolve", "its host name does not resolve", true, func(*testing.T) error {
			return &url.Error{Op: "Post", URL: "https://db.internal.example" + secretURL, Err: &net.OpError{Op: "dial", Net: "tcp",
				Err: &net.DNSError{Err: "no such host", Name: "db.internal.example", Server: "10.1.2.3:53", IsNotFound: true}}}
		}},
		{"a call that ran out of time", "timed out", true, func(t *testing.T) error {
			return post(t, &http.Client{Timeout: time.Millisecond}, slow.URL)
		}},
		{"a deadline passed", "timed out", true, func(*testing.T) error {
			return fmt.Errorf("dial 10.1.2.3:6379: %w", context.DeadlineExceeded)
		}},
		{"a certificate nobody signed", "its TLS certificate was not accepted", true, func(t *testing.T) error {
			return post(t, plain, selfSigned.URL)
		}},
		{"a certificate for another host", "its TLS certificate was not accepted", true, func(*testing.T) error {
			cert := &x509.Certificate{DNSNames: []string{"redis.internal.example"}}
			return fmt.Errorf("dial: %w", &tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: cert, Host: "10.1.2.3"}})
		}},
		{"a server that hung up", "unreachable", true, func(t *testing.T) error {
			return post(t, plain, hangUp.URL)
		}},
		{"a connection reset", "unreachable", true, func(*testing.T) error {
			return &net.OpError{Op: "read", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 6379}, Err: syscall.ECONNRESET}
		}},
		{"a stream cut short", "unreachable", true, func(*testing.T) error {
			return fmt.Errorf("read from 10.1.2.3: %w", io.ErrUnexpectedEOF)
		}},
		{"refused credentials", "authentication failed", false, func(*testing.T) error {
			return errors.New("NOAUTH Authentication required. (10.1.2.3)")
		}},
		{"a wrong password", "authentication failed", false, func(*testing.T) error {
			return errors.New("WRONGPASS invalid username-password pair or user is disabled.")
		}},
		{"a call its caller gave up", "cancelled", false, func(t *testing.T) error {
			req, err := http.NewRequestWithContext(cancelled, http.MethodGet, slow.URL+secretURL, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = plain.Do(req)
			return err
		}},
		{"an error of its own carrying a token", "bad token xoxb-[redacted]", false, func(*testing.T) error {
			return errors.New("bad token xoxb-111-222-SECRETabc")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := c.err(t)
			got := redact.Cause(err)
			if !strings.Contains(got, c.cause) {
				t.Errorf("Cause = %q, want %q (from %v)", got, c.cause, err)
			}
			want := ""
			if c.network {
				want = c.cause
			}
			if n := redact.Network(err); n != want {
				t.Errorf("Network = %q, want %q", n, want)
			}
			worded := redact.Error("slack", err)
			if !errors.Is(worded, err) {
				t.Errorf("Error(%v) no longer reaches the error it words", err)
			}
			for _, s := range []string{got, worded.Error()} {
				for _, leak := range leaks {
					if strings.Contains(s, leak) {
						t.Errorf("%q shows %q", s, leak)
					}
				}
			}
		})
	}
}

func TestATransportErrorKeepsItsServiceAndMethodOnly(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 8443}, Err: syscall.ECONNREFUSED}
	cases := []struct {
		name    string
		service string
		err     error
		want    string
	}{
		{"a refused Web API call", "slack", &url.Error{Op: "Post", URL: "https://u:pa55word@10.1.2.3:8443" + secretURL, Err: refused}, "slack: chat.postMessage: connection refused"},
		{"a cancelled call", "slack", &url.Error{Op: "Post", URL: "http://10.1.2.3/api/chat.update", Err: context.Canceled}, "slack: chat.update: cancelled"},
		{"a call past its deadline", "slack", &url.Error{Op: "Post", URL: "http://10.1.2.3/api/chat.update", Err: context.DeadlineExceeded}, "slack: chat.update: timed out"},
		{"a URL without a path", "", &url.Error{Op: "Get", URL: "http://10.1.2.3", Err: refused}, "connection refused"},
		{"a URL that does not parse", "model", &url.Error{Op: "Get", URL: "http://10.1.2.3:bad:port/x?token=SECRET", Err: io.EOF}, "model: unreachable"},
		{"an error that is no transport error", "slack", fmt.Errorf("socket: invalid_auth for xapp-1-A0-SECRET"), "socket: invalid_auth for xapp-[redacted]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := redact.Error(c.service, c.err).Error()
			if got != c.want {
				t.Errorf("Error(%q, %v) = %q, want %q", c.service, c.err, got, c.want)
			}
		})
	}
	if redact.Error("slack", nil) != nil {
		t.Error("Error of nil is not nil")
	}
	if redact.Cause(nil) != "" || redact.Network(nil) != "" {
		t.Error("nil has words")
	}
}
