package rest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/redact"
)

// defaultClient bounds the steps of a request that should be quick. The
// wait for an answer is left to the tool's timeout (the call's context),
// with a generous backstop for callers that give none. Unless
// allowInternal, it connects to no internal address but the proxy's.
func defaultClient(allowInternal bool) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	dial := dialer.DialContext
	if !allowInternal {
		guarded := *dialer
		guarded.ControlContext = refuseInternal
		proxies := proxyAddrs()
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if proxies[addr] {
				return dialer.DialContext(ctx, network, addr)
			}
			return guarded.DialContext(ctx, network, addr)
		}
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dial,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 5 * time.Minute,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   8,
	}}
}

// withRedirectPolicy returns a copy of c that drops every header but a few
// harmless ones when a redirect leaves the original host: net/http strips
// Authorization there, but not the API-key headers configs commonly use.
func withRedirectPolicy(c *http.Client) *http.Client {
	cp := *c
	next := c.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := checkDestination(req.Context(), req.URL); err != nil {
			return err
		}
		if len(via) > 0 && !sameOrigin(req.URL, via[0].URL) {
			for k := range req.Header {
				switch http.CanonicalHeaderKey(k) {
				case "Accept", "Content-Type", "User-Agent":
				default:
					req.Header.Del(k)
				}
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cp
}

// proxyAddrs lists the host:port of the proxies the environment names:
// the operator's proxy may be on an internal address.
func proxyAddrs() map[string]bool {
	out := map[string]bool{}
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"} {
		v := os.Getenv(k)
		if v == "" {
			continue
		}
		if !strings.Contains(v, "://") {
			v = "http://" + v
		}
		u, err := url.Parse(v)
		if err != nil || u.Hostname() == "" {
			continue
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "socks5": "1080"}[u.Scheme]
			if port == "" {
				port = "80"
			}
		}
		out[net.JoinHostPort(u.Hostname(), port)] = true
	}
	return out
}

func sameOrigin(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && a.Host == b.Host
}

// transportError is what the model learns when no answer came: which
// service, and how it failed in redact's fixed words. The cause, which
// names the host, stays reachable for logs only.
func transportError(service string, err error) error {
	how := redact.Network(err)
	switch {
	case errors.Is(err, context.Canceled):
		return llm.RedactedError(fmt.Sprintf("the call to the %s service was cancelled", service), err)
	case how == "timed out":
		return llm.RedactedError(fmt.Sprintf("the %s service did not answer in time", service), err)
	case how != "" && how != "unreachable":
		return llm.RedactedError(fmt.Sprintf("could not connect to the %s service (%s)", service, how), err)
	}
	return llm.RedactedError(fmt.Sprintf("could not connect to the %s service", service), err)
}

// bareCause strips the *url.Error wrapper, whose text repeats the whole
// URL (query included), so that a log line names the host and path only.
func bareCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// logURL is u without its query and user info, which may carry keys.
func logURL(u *url.URL) string {
	c := *u
	c.RawQuery, c.ForceQuery, c.User, c.Fragment = "", false, nil, ""
	return c.String()
}
