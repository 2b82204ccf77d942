package main

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// lastQuery is the path and decoded query of the fake's last request.
func lastQuery(t *testing.T, f *clienttest.Fake) (string, url.Values) {
	t.Helper()
	reqs := f.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the kernel")
	}
	u, err := url.ParseRequestURI(reqs[len(reqs)-1].Path)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path, u.Query()
}

// decodeStrict decodes stdout into v, refusing unknown fields and trailing data.
func decodeStrict(t *testing.T, stdout string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("not valid JSON of %T: %v\n%s", v, err, stdout)
	}
	if !json.Valid([]byte(stdout)) {
		t.Fatalf("stdout is not one JSON document: %q", stdout)
	}
}

func TestWindowCommand(t *testing.T) {
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	long := strings.Repeat("咖啡", 40) + "尾巴"
	f, env := kernel(t, true)
	if r := waiter(t, env, nil, "session", "new", "work"); r.code != 0 {
		t.Fatalf("session new: %+v", r)
	}
	if r := waiter(t, env, nil, "ask", "--session", "work", "你好 & hi"); r.code != 0 {
		t.Fatalf("ask: %+v", r)
	}
	set := client.Window{Session: "main", Input: "咖啡?", Budget: 4096, Used: 30, Pinned: 1, Sunk: 2,
		Items: []client.WindowItem{
			{ID: 1, Time: at, Role: "user", Content: long, Tokens: 21, Score: 1, Reason: "recent", Source: "pinned"},
			{ID: 2, Time: at.Add(time.Minute), Role: "assistant", Content: "line one\n\tline two", Tokens: 9, Score: 0.4567,
				Reason: "bm25 0.46", Source: "scored"},
		}}
	f.SetWindow(set)

	tests := []struct {
		name      string
		args      []string
		wantCode  int
		wantOut   []string // substrings of stdout
		notOut    []string // must not be in stdout
		wantErr   string   // substring of stderr
		wantQuery string   // the session the kernel was asked for; "" when no request is expected
	}{
		{"default session", []string{"window"}, 0,
			[]string{"session main  budget 4096  used 30  pinned 1  sunk 2  items 2\n", "scored against: 咖啡?\n",
				"TIME", "ROLE", "TOKENS", "SCORE", "SOURCE", "REASON", "CONTENT",
				shortTime(at), "1.000", "pinned", "recent", string([]rune(long)[:59]) + "…",
				"0.457", "scored", "bm25 0.46", "line one line two"},
			[]string{long, "尾巴"}, "", "main"},
		{"derived window", []string{"window", "--session", "work"}, 0,
			[]string{"session work  budget 4096", "pinned 2", "user", "你好 & hi", "assistant", "PONG: 你好 & hi"}, nil, "", "work"},
		{"unknown session", []string{"window", "--session", "nope"}, 1, nil, nil, `unknown session "nope" (HTTP 404)`, "nope"},
		{"argument refused", []string{"window", "main"}, 2, nil, nil, "window takes no arguments", ""},
		{"empty session refused", []string{"window", "--session", ""}, 2, nil, nil, "--session must not be empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Requests())
			r := waiter(t, env, nil, tt.args...)
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout %q\nstderr %q", r.code, tt.wantCode, r.stdout, r.stderr)
			}
			for _, s := range tt.wantOut {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			for _, s := range tt.notOut {
				if strings.Contains(r.stdout, s) {
					t.Errorf("stdout holds %q:\n%s", s, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("stderr %q lacks %q", r.stderr, tt.wantErr)
			}
			if tt.wantQuery == "" {
				if n := len(f.Requests()); n != before {
					t.Errorf("a refused command reached the kernel")
				}
				return
			}
			path, q := lastQuery(t, f)
			if path != "/api/v1/window" || q.Get("session") != tt.wantQuery {
				t.Errorf("request %s %v, want session %q", path, q, tt.wantQuery)
			}
		})
	}
	t.Run("json", func(t *testing.T) {
		r := waiter(t, env, nil, "window", "--json")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var got client.Window
		decodeStrict(t, r.stdout, &got)
		if !reflect.DeepEqual(got, set) {
			t.Errorf("got %+v\nwant %+v", got, set)
		}
	})
	t.Run("excerpts are at most 60 runes", func(t *testing.T) {
		for _, s := range []string{long, "short", strings.Repeat("a", 60), strings.Repeat("界", 61)} {
			if n := utf8.RuneCountInString(excerpt(s)); n > 60 {
				t.Errorf("excerpt of %d runes has %d", utf8.RuneCountInString(s), n)
			}
		}
		if got := excerpt(strings.Repeat("a", 60)); got != strings.Repeat("a", 60) {
			t.Errorf("a 60-rune content was cut: %q", got)
		}
	})
}

func TestMemorySearchCommand(t *testing.T) {
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	f, env := kernel(t, false)
	if r := waiter(t, env, nil, "session", "new", "--channel", "qq", "--partner", "群友", "--scope", "group:1", "qq-g1"); r.code != 0 {
		t.Fatalf("session new: %+v", r)
	}
	private := client.MemoryHit{ID: 1, Session: "main", Time: at, Role: "user", Scope: "private", Layer: 2,
		Content: "我喜欢咖啡 & 茶，" + strings.Repeat("很多很多", 20)}
	group := client.MemoryHit{ID: 2, Session: "qq-g1", Time: at.Add(time.Minute), Role: "user", Channel: "qq",
		Partner: "群友", Scope: "group:1", Layer: 1, Content: "群里也聊咖啡"}
	f.AddMemory(private, group)

	tests := []struct {
		name      string
		args      []string
		wantCode  int
		wantOut   []string   // substrings of stdout
		wantErr   string     // substring of stderr
		wantQuery url.Values // what the kernel received; nil when no request is expected
	}{
		{"chinese and ampersand", []string{"memory", "search", "咖啡", "&", "茶"}, 0,
			[]string{"SCORE", "TIME", "SESSION", "PARTNER", "LAYER", "SCOPE", "EXCERPT",
				"1.000", shortTime(at), "main", "L2", "private", "我喜欢咖啡 & 茶，很多",
				"0.333", "qq-g1", "群友", "L1", "group:1", "群里也聊咖啡"},
			"", url.Values{"q": {"咖啡 & 茶"}, "k": {"10"}}},
		{"every flag, flags after the text", []string{"memory", "search", "咖啡", "--session", "qq-g1", "--k", "3", "--scope", "group:1", "--layer", "1"}, 0,
			[]string{"群里也聊咖啡"}, "",
			url.Values{"q": {"咖啡"}, "session": {"qq-g1"}, "k": {"3"}, "scope": {"group:1"}, "layer": {"1"}}},
		{"no hits", []string{"memory", "search", "nothing"}, 0, nil, "no memories match", url.Values{"q": {"nothing"}, "k": {"10"}}},
		{"dash text after --", []string{"memory", "search", "--", "-咖啡"}, 0, nil, "no memories match", url.Values{"q": {"-咖啡"}, "k": {"10"}}},
		{"unknown session", []string{"memory", "search", "--session", "nope", "x"}, 1, nil, `unknown session "nope" (HTTP 404)`,
			url.Values{"q": {"x"}, "session": {"nope"}, "k": {"10"}}},
		{"no text", []string{"memory", "search", "--k", "3"}, 2, nil, "memory search needs text", nil},
		{"k zero", []string{"memory", "search", "--k", "0", "x"}, 2, nil, "--k must be from 1 to 100, got 0", nil},
		{"k too big", []string{"memory", "search", "--k", "101", "x"}, 2, nil, "--k must be from 1 to 100, got 101", nil},
		{"bad layer", []string{"memory", "search", "--layer", "3", "x"}, 2, nil, "--layer must be 1 or 2, got 3", nil},
		{"bad scope", []string{"memory", "search", "--scope", "friends", "x"}, 2, nil, `--scope must be private, public or group:<id>, got "friends"`, nil},
		{"no subcommand", []string{"memory"}, 2, nil, "memory needs a subcommand: search", nil},
		{"unknown subcommand", []string{"memory", "find", "x"}, 2, nil, `unknown memory subcommand "find"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Requests())
			r := waiter(t, env, nil, tt.args...)
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout %q\nstderr %q", r.code, tt.wantCode, r.stdout, r.stderr)
			}
			for _, s := range tt.wantOut {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("stderr %q lacks %q", r.stderr, tt.wantErr)
			}
			if tt.wantQuery == nil {
				if len(f.Requests()) != before {
					t.Errorf("a refused command reached the kernel")
				}
				return
			}
			path, q := lastQuery(t, f)
			if path != "/api/v1/memory/search" || !reflect.DeepEqual(q, tt.wantQuery) {
				t.Errorf("request %s %v, want %v", path, q, tt.wantQuery)
			}
		})
	}

	jsonTests := []struct {
		name string
		args []string
		want []client.MemoryHit
	}{
		{"hits", []string{"memory", "search", "--json", "咖啡 & 茶"}, []client.MemoryHit{
			func() client.MemoryHit { h := private; h.Score, h.Reason = 1, "fake: 3/3 terms"; return h }(),
			func() client.MemoryHit { h := group; h.Score, h.Reason = 1.0/3, "fake: 1/3 terms"; return h }(),
		}},
		{"no hits is []", []string{"memory", "search", "--json", "nothing"}, []client.MemoryHit{}},
	}
	for _, tt := range jsonTests {
		t.Run("json "+tt.name, func(t *testing.T) {
			r := waiter(t, env, nil, tt.args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var got []client.MemoryHit
			decodeStrict(t, r.stdout, &got)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if got != nil && len(got) == 0 && strings.TrimSpace(r.stdout) != "[]" {
				t.Errorf("empty result printed as %q", r.stdout)
			}
		})
	}
}

func TestSessionNewWhereabouts(t *testing.T) {
	f, env := kernel(t, false)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     client.Session // what the kernel stored; zero when the command is refused
		wantErr  string
	}{
		{"channel, partner and scope", []string{"session", "new", "--channel", "qq", "--partner", "群友 A&B", "--scope", "group:42", "qq-g42"}, 0,
			client.Session{ID: "qq-g42", Channel: "qq", Partner: "群友 A&B", Scope: "group:42"}, ""},
		{"public", []string{"session", "new", "--scope", "public", "pub"}, 0, client.Session{ID: "pub", Scope: "public"}, ""},
		{"bad scope", []string{"session", "new", "--scope", "group:", "bad"}, 2, client.Session{}, "--scope must be private, public or group:<id>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Requests())
			r := waiter(t, env, nil, tt.args...)
			if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantErr) {
				t.Fatalf("exit %d, want %d and %q\nstdout %q\nstderr %q", r.code, tt.wantCode, tt.wantErr, r.stdout, r.stderr)
			}
			if tt.wantCode != 0 {
				if len(f.Requests()) != before {
					t.Errorf("a refused command reached the kernel")
				}
				return
			}
			if r.stdout != tt.want.ID+"\n" {
				t.Errorf("stdout %q", r.stdout)
			}
			r = waiter(t, env, nil, "session", "list", "--json")
			var ss []client.Session
			decodeStrict(t, r.stdout, &ss)
			for _, s := range ss {
				if s.ID == tt.want.ID {
					s.Created, s.Updated = time.Time{}, time.Time{}
					if s != tt.want {
						t.Errorf("stored %+v, want %+v", s, tt.want)
					}
					return
				}
			}
			t.Errorf("session %q not listed: %s", tt.want.ID, r.stdout)
		})
	}
}

func TestUsageMentionsMemory(t *testing.T) {
	r := waiter(t, nil, nil, "help")
	for _, s := range []string{"window [--session ID] [--json]", "memory search [--session ID] [--k N] [--scope S] [--layer 1|2] [--json] [--thumbnails DIR] TEXT...",
		"[--channel C] [--partner P] [--scope S]"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("usage lacks %q", s)
		}
	}
}

func TestTableAlignsWideText(t *testing.T) {
	tests := []struct {
		name string
		rows [][]string
		want string
	}{
		{"ascii", [][]string{{"A", "BB", "C"}, {"ccc", "d", "e"}}, "A    BB  C\nccc  d   e\n"},
		{"han", [][]string{{"PARTNER", "LAYER"}, {"群友", "L1"}, {"-", "L2"}}, "PARTNER  LAYER\n群友     L1\n-        L2\n"},
		{"kana, hangul and fullwidth", [][]string{{"カナ", "x"}, {"한", "y"}, {"，", "z"}}, "カナ  x\n한    y\n，    z\n"},
		{"combining mark", [][]string{{"e\u0301", "x"}, {"ab", "y"}}, "e\u0301   x\nab  y\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			a := &app{stdout: &out}
			if err := a.table(tt.rows); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tt.want)
			}
		})
	}
}

// TestMemorySearchImages: image hits are listed after the events with their hit's number, how
// they matched and their thumbnail's route, or the file it was saved to with --thumbnails.
func TestMemorySearchImages(t *testing.T) {
	f, env := kernel(t, false)
	f.AddMemory(client.MemoryHit{ID: 7, Session: "main", Time: time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC), Role: "user", Scope: "private",
		Layer: 2, Content: "look at this sunset", Images: []client.HitImage{
			{Block: "b0a1", Name: "sunset.png", MIME: "image/png", Matched: true}, {Block: "c2d3", MIME: "image/jpeg"}}})
	png := []byte("\x89PNG\r\n\x1a\nfake")
	f.SetThumbnail("b0a1", png)
	f.SetThumbnail("c2d3", png)
	r := waiter(t, env, nil, "memory", "search", "sunset")
	for _, s := range []string{"IMAGE", "MATCH", "THUMBNAIL", "sunset.png", "image", "text", "/api/v1/memory/blocks/b0a1/thumbnail", "/api/v1/memory/blocks/c2d3/thumbnail"} {
		if r.code != 0 || !strings.Contains(r.stdout, s) {
			t.Fatalf("memory search: exit %d, stdout lacks %q:\n%s%s", r.code, s, r.stdout, r.stderr)
		}
	}
	dir := filepath.Join(t.TempDir(), "thumbs")
	r = waiter(t, env, nil, "memory", "search", "--thumbnails", dir, "sunset")
	if r.code != 0 || !strings.Contains(r.stdout, filepath.Join(dir, "b0a1.png")) {
		t.Fatalf("--thumbnails: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, b := range []string{"b0a1", "c2d3"} {
		if got, err := os.ReadFile(filepath.Join(dir, b+".png")); err != nil || !bytes.Equal(got, png) {
			t.Errorf("saved thumbnail %s: %q, %v", b, got, err)
		}
	}
}
