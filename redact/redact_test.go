package redact_test

import (
	"strings"
	"testing"

	"github.com/slackbot/slackbot/redact"
)

func TestStringTakesOutEveryCredentialShape(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, secret, keep string
	}{
		{"a Slack bot token", "token xoxb-1234-5678-abcdefABCDEF rejected", "1234-5678-abcdefABCDEF", "xoxb-[redacted] rejected"},
		{"a Slack user token", "xoxp-11-22-33-aabbcc", "11-22-33-aabbcc", "xoxp-[redacted]"},
		{"a Slack refresh token", "xoxe-1-ABCDEFGH", "1-ABCDEFGH", "xoxe-[redacted]"},
		{"a Slack legacy token", "xoxa-2-abcdef123", "2-abcdef123", "xoxa-[redacted]"},
		{"a Slack app token", "app=xapp-1-A0-123-deadbeef", "1-A0-123-deadbeef", "xapp-[redacted]"},
		{"an OpenAI key", `{"error":"bad key sk-proj-abcdEFGH1234"}`, "abcdEFGH1234", "sk-proj-[redacted]"},
		{"an OpenAI key partly masked", "Incorrect API key provided: sk-abc12***********wxyz", "abc12***********wxyz", "sk-[redacted]"},
		{"an Anthropic key", "x-api-key: sk-ant-api03-Zz9_yY-xX", "api03-Zz9_yY-xX", "sk-ant-[redacted]"},
		{"a GitHub fine-grained token", "github_pat_11ABCDEF0_xyzXYZ123", "11ABCDEF0_xyzXYZ123", "github_pat_[redacted]"},
		{"a GitHub classic token", "ghp_0123456789abcdefABCDEF", "0123456789abcdefABCDEF", "ghp_[redacted]"},
		{"a GitHub OAuth token", "gho_0123456789abcdef", "0123456789abcdef", "gho_[redacted]"},
		{"a GitHub server token", "ghs_0123456789abcdef", "0123456789abcdef", "ghs_[redacted]"},
		{"an AWS access key id", "AKIAIOSFODNN7EXAMPLE used", "IOSFODNN7EXAMPLE", "AKIA[redacted] used"},
		{"a bearer token", "sent Bearer eyJhbGciOi.JIUzI1.NiJ9", "eyJhbGciOi", "Bearer [redacted]"},
		{"a basic credential", "basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", "basic [redacted]"},
		{"an Authorization header", "Authorization: Token abc123secret\nnext line", "abc123secret", "Authorization: [redacted]\nnext line"},
		{"an Authorization value in JSON", `{"Authorization":"Custom s3cr3tvalue"}`, "s3cr3tvalue", `"Authorization":"[redacted]"`},
		{"a URL password", "Get http://user:hunter22@example.com/x: refused", "hunter22", "http://user:[redacted]@example.com/x"},
		{"a URL token parameter", "POST http://127.0.0.1:8080/mcp?token=S3CRET&x=1 failed", "S3CRET", "?token=[redacted]&x=1"},
		{"an api_key parameter", "/v1?api_key=abcd1234", "abcd1234", "api_key=[redacted]"},
		{"an apikey parameter", "/v1?a=1&apikey=abcd1234#frag", "abcd1234", "apikey=[redacted]#frag"},
		{"an access_token parameter", "/cb?access_token=ya29.a0Af", "ya29.a0Af", "access_token=[redacted]"},
		{"a signature parameter", "https://bucket.s3/x?X-Amz-Signature=abcdef0123&X-Amz-Date=1", "abcdef0123", "X-Amz-Signature=[redacted]&X-Amz-Date=1"},
		{"a sig parameter", "https://blob/x?sv=1&sig=Zm9vYmFy", "Zm9vYmFy", "sig=[redacted]"},
		{"a secret in a log line", "client_secret=topsecret1 expired", "topsecret1", "client_secret=[redacted] expired"},
		{"a password in a log line", "password=hunter2", "hunter2", "password=[redacted]"},
		{"an auth parameter", "wss://x/ws?auth=QWERTY123", "QWERTY123", "auth=[redacted]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := redact.String(c.in)
			if strings.Contains(got, c.secret) {
				t.Errorf("String(%q) = %q: the secret %q is still there", c.in, got, c.secret)
			}
			if !strings.Contains(got, c.keep) {
				t.Errorf("String(%q) = %q: want it to hold %q", c.in, got, c.keep)
			}
		})
	}
}

func TestStringLeavesOrdinaryTextAlone(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"",
		"the task-runner finished in 3s",
		"see https://example.com/docs?page=2&lang=en#top",
		"risk-free, skip-list, ask-me",
		"basic idea",
		"monkey business",
		"xoxo, the team",
	} {
		if got := redact.String(s); got != s {
			t.Errorf("String(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestURLShowsWhereButNotHow(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want string
	}{
		{"http://user:pass@127.0.0.1:8080/mcp?token=SECRET", "http://user:[redacted]@127.0.0.1:8080/mcp?token=[redacted]"},
		{"https://ghp_abcdef123456@github.com/org/repo", "https://[redacted]@github.com/org/repo"},
		{"https://mcp.example.com/sse?Api-Key=k1&team=core", "https://mcp.example.com/sse?Api-Key=[redacted]&team=core"},
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp"},
		{"https://x.example/p?access_token=a&signature=b&sig=c&password=d&key=e&secret=f", "https://x.example/p?access_token=[redacted]&signature=[redacted]&sig=[redacted]&password=[redacted]&key=[redacted]&secret=[redacted]"},
		{"https://x.example/p#access_token=abc", "https://x.example/p#access_token=[redacted]"},
		{"http://[::1]:9/a%2Fb?q=1", "http://[::1]:9/a%2Fb?q=1"},
	}
	for _, c := range cases {
		if got := redact.URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAURLThatDoesNotParseStillLosesItsSecrets(t *testing.T) {
	t.Parallel()
	got := redact.URL("http://user:pa55word@host:port:bad/x?token=SECRET%zz")
	for _, s := range []string{"pa55word", "SECRET"} {
		if strings.Contains(got, s) {
			t.Errorf("URL kept %q: %q", s, got)
		}
	}
}

func TestSecretsListsWhatAURLCarries(t *testing.T) {
	t.Parallel()
	got := strings.Join(redact.Secrets("http://user:pa55word@h:1/mcp?token=SEC%2BRET&team=core&key=ab"), " ")
	if got != "pa55word SEC%2BRET SEC+RET" {
		t.Errorf("Secrets = %q", got)
	}
	if got := redact.Secrets("https://ghp_abcdef123456@github.com/x"); len(got) != 1 || got[0] != "ghp_abcdef123456" {
		t.Errorf("a user name without a password: %q", got)
	}
}
