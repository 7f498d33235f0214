package redact_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/slackbot/slackbot/redact"
)

type stringer string

func (s stringer) String() string { return string(s) }

type object map[string]string

func (o object) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	for k, v := range o {
		enc.AddString(k, v)
	}
	return nil
}

func TestEveryLogLineOfAWrappedCoreLosesItsSecrets(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	log := zap.New(redact.Core(zapcore.NewCore(enc, zapcore.AddSync(&buf), zapcore.DebugLevel)))
	secrets := []string{"1111-aaaa", "S3CRETQ", "pa55w0rd", "0123456789abcdef", "sk-key-ABCDEFGH", "WITHSECRET", "ARRSECRET", "ANYSECRET"}

	log = log.With(zap.String("with", "xapp-1-WITHSECRET"))
	log.Debug("token xoxb-1111-aaaa was refused",
		zap.String("url", "http://u:pa55w0rd@127.0.0.1:1/mcp?token=S3CRETQ"),
		zap.Error(fmt.Errorf("calling: %w", errors.New("bad key sk-key-ABCDEFGH"))),
		zap.Stringer("header", stringer("Authorization: Bearer 0123456789abcdef")),
		zap.Object("obj", object{"k": "ghp_0123456789abcdef"}),
		zap.Strings("list", []string{"Bearer ARRSECRET1"}),
		zap.Any("any", map[string]any{"nested": []string{"api_key=ANYSECRET"}}),
		zap.ByteString("bytes", []byte("xoxp-1111-aaaa")),
		zap.Int("n", 7),
	)
	out := buf.String()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("the log line holds %q:\n%s", s, out)
		}
	}
	for _, want := range []string{`"n":7`, "xoxb-[redacted]", `"with":"xapp-[redacted]"`, "calling: bad key sk-[redacted]"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log line lacks %q:\n%s", want, out)
		}
	}
}
