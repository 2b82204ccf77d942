package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// modelKernel serves a fake kernel with the dense-model routes.
func modelKernel(t *testing.T) (*clienttest.Models, map[string]string) {
	t.Helper()
	m := clienttest.NewModels(clienttest.New())
	return m, map[string]string{"HOLOGRAM_SOCKET": clienttest.ServeUnix(t, m)}
}

func TestModelCommands(t *testing.T) {
	fake, env := modelKernel(t)
	lines := func(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

	r := waiter(t, env, nil, "model", "list")
	ls := lines(r.stdout)
	if r.code != 0 || len(ls) != 3 || !strings.HasPrefix(ls[0], "ID") ||
		!strings.Contains(ls[1], "bge-small-zh-v1.5") || !strings.Contains(ls[1], "95.0 MB") || !strings.Contains(ls[1], "recorded at download") ||
		!strings.Contains(ls[2], "pinned ca456c06b3a9…") {
		t.Fatalf("model list: %+v", r)
	}

	// Not a terminal: no progress line, one line of result.
	r = waiter(t, env, nil, "model", "install", "bge-small-zh-v1.5")
	if r.code != 0 || r.stderr != "" ||
		r.stdout != "model bge-small-zh-v1.5 installed (95.0 MB, from https://hf-mirror.com); use it with `waiter model use bge-small-zh-v1.5`\n" {
		t.Fatalf("model install: %+v", r)
	}
	r = waiter(t, env, nil, "model", "list", "--json")
	var ms []client.EmbeddingModel
	decodeStrict(t, r.stdout, &ms)
	if len(ms) != 2 || !ms[0].Installed || ms[0].Files[0].Check != "recorded" || ms[0].Files[0].SHA256 == "" {
		t.Fatalf("model list --json after install: %+v", ms)
	}
	if ls := lines(waiter(t, env, nil, "model", "list").stdout); !strings.Contains(ls[1], "installed") || !strings.Contains(ls[1], "111111111111… (recorded)") {
		t.Fatalf("model list after install:\n%s", strings.Join(ls, "\n"))
	}

	fake.FailInstall("multilingual-e5-small", "download onnx/model.onnx failed from every hub")
	r = waiter(t, env, nil, "model", "install", "multilingual-e5-small")
	if r.code != 1 || !strings.Contains(r.stderr, "waiter: install model multilingual-e5-small: download onnx/model.onnx failed from every hub") {
		t.Fatalf("failed install: %+v", r)
	}

	r = waiter(t, env, nil, "model", "use", "bge-small-zh-v1.5")
	if r.code != 0 || r.stdout != "dense: bge-small-zh-v1.5 (space bge-small-zh-v1.5:0123456789abcdef01234567); 40 events embedded\n" {
		t.Fatalf("model use: %+v", r)
	}
	r = waiter(t, env, nil, "status")
	if r.code != 0 || !strings.Contains(r.stdout, "embedding     dense: bge-small-zh-v1.5") {
		t.Fatalf("status:\n%s", r.stdout)
	}
	r = waiter(t, env, nil, "model", "remove", "bge-small-zh-v1.5")
	if r.code != 1 || !strings.Contains(r.stderr, "is in use") {
		t.Fatalf("remove of the active model: %+v", r)
	}
	r = waiter(t, env, nil, "model", "use", "", "--json")
	var st client.EmbeddingStatus
	decodeStrict(t, r.stdout, &st)
	if r.code != 0 || st.Mode != client.EmbeddingSparse || !strings.Contains(st.Reason, "no dense model chosen") {
		t.Fatalf(`model use "" --json: %+v`, r)
	}
	r = waiter(t, env, nil, "status")
	if !strings.Contains(r.stdout, "embedding     sparse: no dense model chosen") {
		t.Fatalf("status in sparse mode:\n%s", r.stdout)
	}

	dir := t.TempDir()
	r = waiter(t, env, nil, "model", "import", "multilingual-e5-small", dir)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "model multilingual-e5-small imported from "+dir) {
		t.Fatalf("model import: %+v", r)
	}
	fake.Corrupt("multilingual-e5-small")
	r = waiter(t, env, nil, "model", "use", "multilingual-e5-small")
	if r.code != 1 || !strings.Contains(r.stderr, "failed to load") {
		t.Fatalf("use of a corrupt model: %+v", r)
	}
	if r = waiter(t, env, nil, "model", "remove", "bge-small-zh-v1.5"); r.code != 0 || r.stdout != "model bge-small-zh-v1.5 removed\n" {
		t.Fatalf("model remove: %+v", r)
	}

	for _, args := range [][]string{
		{"model"}, {"model", "fly"}, {"model", "install"}, {"model", "install", "a", "b"}, {"model", "import", "x"},
		{"model", "use"}, {"model", "remove"},
	} {
		if r := waiter(t, env, nil, args...); r.code != 2 {
			t.Errorf("%q: exit %d, want 2 (usage)", args, r.code)
		}
	}
	remote := map[string]string{"HOLOGRAM_TOKEN": "t"}
	if r := waiter(t, remote, nil, "--remote", "https://k.example:8765", "model", "import", "x", "rel/dir"); r.code != 2 ||
		!strings.Contains(r.stderr, "absolute path on the kernel's machine") {
		t.Errorf("remote import of a relative dir: %+v", r)
	}
}

func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	p := newProgressLine(&b, true)
	p.update(client.ModelProgress{Model: "m", File: "onnx/model.onnx", Hub: "https://hf-mirror.com", Done: 47_500_000, Total: 95_000_000})
	p.update(client.ModelProgress{Model: "m", File: "tokenizer.json", Done: 10})
	p.finish()
	first, second := "m onnx/model.onnx: 47.5 MB of 95.0 MB (50%) from https://hf-mirror.com", "m tokenizer.json: 10 B"
	// The shorter line blanks what is left of the longer one.
	want := "\r" + first + "\r" + second + strings.Repeat(" ", len(first)-len(second)) + "\n"
	if b.String() != want {
		t.Fatalf("progress line %q\nwant %q", b.String(), want)
	}
	b.Reset()
	q := newProgressLine(&b, false)
	q.update(client.ModelProgress{Model: "m", File: "f", Done: 1, Total: 2})
	q.finish()
	if b.Len() != 0 {
		t.Fatalf("progress on a non-terminal: %q", b.String())
	}
}

// TestEmbeddingLineImages: with a model that embeds images, the line counts them too.
func TestEmbeddingLineImages(t *testing.T) {
	st := client.EmbeddingStatus{Mode: client.EmbeddingDense, Model: "chinese-clip-vit-base-patch16", Space: "clip:1",
		Reembed: client.ReembedProgress{Done: 40, Total: 40}, Images: &client.ReembedProgress{Done: 3, Total: 7, Running: true}}
	if got, want := embeddingLine(st), "dense: chinese-clip-vit-base-patch16 (space clip:1); 40 events embedded, 3 of 7 images"; got != want {
		t.Errorf("embeddingLine = %q, want %q", got, want)
	}
	st.Images = &client.ReembedProgress{Done: 7, Total: 7}
	if got := embeddingLine(st); !strings.HasSuffix(got, "40 events embedded, 7 images") {
		t.Errorf("embeddingLine = %q", got)
	}
}
