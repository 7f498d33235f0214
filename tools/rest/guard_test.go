package rest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/slackbot/slackbot/config"
)

// proxy is a loopback HTTP proxy standing for the internet: requests for
// publicHost are answered by public, every other request is recorded as
// one that reached an internal address.
type proxy struct {
	*httptest.Server
	mu      sync.Mutex
	reached []string
}

const publicHost = "203.0.113.7" // TEST-NET-3: a public address nobody answers

func newProxy(t *testing.T, public http.HandlerFunc) *proxy {
	t.Helper()
	p := &proxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Hostname() == publicHost {
			public(w, r)
			return
		}
		p.mu.Lock()
		p.reached = append(p.reached, r.URL.String())
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"internal":"secret"}`))
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *proxy) internalRequests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reached...)
}

// viaProxy is a client that sends every request through p.
func viaProxy(p *proxy) *http.Client {
	u, _ := url.Parse(p.URL)
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
}

func TestARedirectFromAPublicHostToAnInternalOneIsRefused(t *testing.T) {
	t.Parallel()
	victim := newPeer(t, nil)
	for _, target := range []string{
		victim.URL + "/admin",
		"http://localhost:9/admin",
		"http://169.254.169.254/latest/meta-data/",
		"http://10.0.0.1/",
		"http://192.168.1.1/",
		"http://[::1]:9/",
		"http://0.0.0.0:9/",
		"http://[::ffff:127.0.0.1]:9/",
	} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			px := newProxy(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target, http.StatusFound)
			})
			h := newHarness(t, map[string]config.RestTool{"pub": {URL: "http://" + publicHost + "/start"}}, nil,
				Options{Client: viaProxy(px)})
			out := h.exec("rest__pub", `{}`)
			if !out.IsError || !strings.Contains(out.Content, "was refused") {
				t.Errorf("the call gave %q, want it refused", out.Content)
			}
			if got := px.internalRequests(); len(got) > 0 {
				t.Errorf("the redirect reached %v", got)
			}
			hostFree(t, out.Content, victim.Server)
		})
	}
	if n := victim.count(); n != 0 {
		t.Errorf("the internal server received %d requests", n)
	}
}

func TestAHostTheModelChoosesCannotBeAnInternalOne(t *testing.T) {
	t.Parallel()
	victim := newPeer(t, nil)
	host := strings.TrimPrefix(victim.URL, "http://")
	_, port, _ := strings.Cut(host, ":")
	px := newProxy(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"public":true}`)) })
	for _, c := range []struct {
		name   string
		client *http.Client
	}{
		{"with the default client", nil},
		{"through a proxy", viaProxy(px)},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, map[string]config.RestTool{"any": {URL: "http://{host}/status"}}, nil, Options{Client: c.client})
			for _, hv := range []string{host, "localhost:" + port, "0.0.0.0:" + port, "127.1:" + port, "0x7f.0.0.1:" + port, "2130706433:" + port} {
				out := h.exec("rest__any", `{"host":"`+hv+`"}`)
				if !out.IsError || !strings.Contains(out.Content, "was refused") {
					t.Errorf("host %s: %q, want it refused", hv, out.Content)
				}
			}
		})
	}
	if n := victim.count(); n != 0 {
		t.Errorf("the internal server received %d requests", n)
	}
	if got := px.internalRequests(); len(got) > 0 {
		t.Errorf("the proxy was asked for %v", got)
	}
	// A public host the model names is fine.
	h := newHarness(t, map[string]config.RestTool{"any": {URL: "http://{host}/status"}}, nil, Options{Client: viaProxy(px)})
	if got := h.mustOK("rest__any", `{"host":"`+publicHost+`"}`); got != `{"public":true}` {
		t.Errorf("the public host answered %q", got)
	}
}

func TestTheDefaultClientConnectsToNoInternalAddress(t *testing.T) {
	t.Parallel()
	victim := newPeer(t, nil)
	ctx := context.Background()
	req, _ := http.NewRequestWithContext(ctx, "GET", victim.URL+"/admin", nil)
	resp, err := defaultClient(false).Do(req)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, errForbiddenAddress) {
		t.Errorf("the request gave %v, want it refused at the dial", err)
	}
	if n := victim.count(); n != 0 {
		t.Errorf("the internal server received %d requests", n)
	}
}

func TestAConfiguredLoopbackHostStillRedirectsOnLoopback(t *testing.T) {
	t.Parallel()
	final := newPeer(t, nil)
	first := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, final.URL+"/moved", http.StatusFound)
	})
	h := newHarness(t, map[string]config.RestTool{"local": {URL: first.URL + "/start"}}, nil, Options{})
	if got := h.mustOK("rest__local", `{}`); got != `{"ok":true}` {
		t.Errorf("content = %q", got)
	}
	if p := final.last(t).Path; p != "/moved" {
		t.Errorf("the redirect reached %q", p)
	}
}
