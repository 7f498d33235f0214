// Package telemetrytest is what tests of the bot's telemetry serve and read
// it with: the endpoint on loopback, a scrape of it parsed by Prometheus's
// own text parser, and an OTLP/HTTP receiver that decodes exported spans
// from the real protobuf.
package telemetrytest

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Families are scraped metric families by name.
type Families map[string]*dto.MetricFamily

// Scrape GETs url (a /metrics endpoint) and parses the text format.
func Scrape(tb testing.TB, url string) Families {
	tb.Helper()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("scrape %s: HTTP %d", url, resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		tb.Fatalf("scrape %s: %v", url, err)
	}
	return fams
}

// Value is the value of the sample of family name whose labels include
// every pair of labels ("k", "v", …): a counter's or gauge's value, a
// histogram's count. ok is false when there is no such sample.
func (f Families) Value(name string, labels ...string) (v float64, ok bool) {
	fam := f[name]
	if fam == nil {
		return 0, false
	}
	for _, m := range fam.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// LabelValues returns every label value of every family whose name starts
// with prefix, for checks that no identifier leaks into a label.
func (f Families) LabelValues(prefix string) []string {
	var out []string
	for name, fam := range f {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, lp := range m.GetLabel() {
				out = append(out, lp.GetValue())
			}
		}
	}
	sort.Strings(out)
	return out
}

// Span is one received span with its parent's id and its attributes as
// strings.
type Span struct {
	Name     string
	TraceID  string
	SpanID   string
	ParentID string // "" for a root span
	Attrs    map[string]string
	Error    bool // status code error
	Service  string
	Start    uint64
	End      uint64
}

// Receiver is an OTLP/HTTP trace receiver on loopback: it decodes every
// ExportTraceServiceRequest posted to /v1/traces.
type Receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []Span
	raw [][]byte
}

// NewReceiver starts a receiver, closed at the test's end.
func NewReceiver(tb testing.TB) *Receiver {
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	tb.Cleanup(r.srv.Close)
	return r
}

// URL is the receiver's base URL (the exporter adds /v1/traces).
func (r *Receiver) URL() string { return r.srv.URL }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want protobuf on /v1/traces", http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var spans []Span
	for _, rs := range msg.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				spans = append(spans, convert(s, service))
			}
		}
	}
	r.mu.Lock()
	r.got = append(r.got, spans...)
	r.raw = append(r.raw, b)
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func convert(s *tracepb.Span, service string) Span {
	sp := Span{Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
		Attrs: map[string]string{}, Error: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR, Service: service,
		Start: s.GetStartTimeUnixNano(), End: s.GetEndTimeUnixNano()}
	if len(s.GetParentSpanId()) > 0 {
		sp.ParentID = hex.EncodeToString(s.GetParentSpanId())
	}
	for _, kv := range s.GetAttributes() {
		sp.Attrs[kv.GetKey()] = valueText(kv.GetValue())
	}
	return sp
}

// valueText writes an attribute's value as text: strings as they are,
// numbers and booleans as Go formats them, arrays joined with commas.
func valueText(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, valueText(e))
		}
		return strings.Join(parts, ",")
	}
	return v.String()
}

// Spans returns every span received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.got...)
}

// Contains reports whether any export carried text anywhere in its bytes
// (names, attributes, events, status), for checks that something private
// was never sent.
func (r *Receiver) Contains(text string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.raw {
		if bytes.Contains(b, []byte(text)) {
			return true
		}
	}
	return false
}

// Readiness is what /readyz answers: "ready" or "not ready", and each
// check's word.
type Readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// Ready asks base's /readyz and returns the status code and the body.
func Ready(tb testing.TB, base string) (int, Readiness) {
	tb.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var r Readiness
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, r
}
