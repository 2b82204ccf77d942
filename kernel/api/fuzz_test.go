package api

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// fuzzRoutes are the API routes that decode a JSON body.
var fuzzRoutes = []struct{ method, path string }{
	{"POST", "/api/v1/chat"},
	{"POST", "/api/v1/sessions"},
	{"PATCH", "/api/v1/sessions/s1"},
	{"PUT", "/api/v1/sessions/s1/instructions"},
	{"POST", "/api/v1/providers"},
	{"POST", "/api/v1/providers/test"},
	{"POST", "/api/v1/pause"},
	{"POST", "/api/v1/memory/entities"},
	{"PUT", "/api/v1/memory/entities/1"},
	{"POST", "/api/v1/memory/triples"},
	{"POST", "/api/v1/memory/pin"},
	{"POST", "/api/v1/memory/forget"},
	{"POST", "/api/v1/plugins"},
	{"POST", "/v1/chat/completions"},
}

// FuzzAPIJSON sends arbitrary bodies to every JSON route, with the token, through the server's
// whole handler: no handler panics, every answer is JSON, and an error repeats at most a
// bounded part of the input.
func FuzzAPIJSON(f *testing.F) {
	for i, body := range []string{
		`{"session":"s1","input":"hello"}`,
		`{"title":"t","system_prompt":"p","scope":"group:1"}`,
		`{"name":"p","base_url":"http://127.0.0.1:1/v1","model":"m","api_key":"k"}`,
		`{"paused":true}`,
		`{"name":"E","kind":"person","text":"x"}`,
		`{"subject":1,"predicate":"likes","object":2}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"user":"u"}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"tools":[{"type":"function","function":{"name":"f","parameters":{}}}]}`,
		`{"unknown":1}`,
		`{"session":1e999}`,
		`[]`,
		`{"a":"\ud800"}`,
		`{}{}`,
	} {
		f.Add(uint8(i), []byte(body))
	}
	logs := &logBuffer{}
	s := New(&fakeBackend{}, Options{Token: "fuzz-token-fuzz-token-fuzz-token-1", Logger: logs.logger()})
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		rt := fuzzRoutes[int(route)%len(fuzzRoutes)]
		req := httptest.NewRequest(rt.method, "http://127.0.0.1"+rt.path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer fuzz-token-fuzz-token-fuzz-token-1")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if strings.Contains(logs.String(), "handler panic") {
			t.Fatalf("%s %s panicked on %q:\n%s", rt.method, rt.path, body, logs.String())
		}
		if rec.Code >= 400 {
			out := rec.Body.Bytes()
			if !json.Valid(out) {
				t.Fatalf("HTTP %d answer is not JSON: %q", rec.Code, out)
			}
			if len(out) > maxErrorBytes+512 {
				t.Fatalf("HTTP %d answer of %d bytes", rec.Code, len(out))
			}
		}
	})
}
