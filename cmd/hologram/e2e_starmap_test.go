//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/cmd/internal/daemon"
	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/kernel/security"
	mem3 "github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/memtest"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// starFixtureEvents is the size of the synthetic memory the star map test renders.
const starFixtureEvents = 900

// seedStarMemory fills the install's data dir with a synthetic memory (memory/memtest.Synth:
// sessions with partners, a third of them group chats, English and Chinese), ingested through
// the kernel and distilled by a memory GC with the LLM-free rules, plus a provider so the app
// opens on its tabs. It returns the graph as the kernel lists it.
func seedStarMemory(t *testing.T, in *install, providerURL string) (entities, triples int) {
	t.Helper()
	return withStarKernel(t, in, providerURL, func(ctx context.Context, k *kernel.Kernel, store *sqlite.Store) {
		seedSynth(t, ctx, k, store, starFixtureEvents)
	})
}

// withStarKernel opens the install's kernel in-process (the rules extractor, no idle cooling),
// runs seed on it, adds a provider so the app opens on its tabs, and returns the graph's size
// as the kernel lists it; the kernel is closed on return.
func withStarKernel(t *testing.T, in *install, providerURL string, seed func(ctx context.Context, k *kernel.Kernel, store *sqlite.Store)) (entities, triples int) {
	t.Helper()
	conf := filepath.Join(in.root, "config", "hologram")
	if err := os.MkdirAll(conf, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "config.toml"),
		[]byte("[memory]\ndistill_idle = \"1ms\"\nextractor = \"rules\"\ngc_interval = \"0s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	envs := in.environ("")
	env := func(k string) string {
		for _, kv := range envs {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	cfg, _, err := config.Load("hologram", []string{"--data", in.data}, env)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mem := daemon.NewMemoryAssets(cfg, log)
	defer mem.Close()
	keys, err := security.LoadOrCreateKeyFile(cfg.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	k, store, err := daemon.BuildKernel(ctx, cfg, log, mem, security.NewCodec(keys), daemon.NewProvider(log))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	defer k.Close()
	seed(ctx, k, store)
	if _, err := k.Service().AddProvider(ctx, client.ProviderConfig{Name: "local", BaseURL: providerURL, Model: "m"}); err != nil {
		t.Fatal(err)
	}
	for after := ""; ; {
		p, err := k.Service().Graph(ctx, client.GraphQuery{After: after, Limit: client.MaxGraphLimit})
		if err != nil {
			t.Fatal(err)
		}
		entities, triples = entities+len(p.Entities), triples+len(p.Triples)
		if after = p.Next; after == "" {
			return entities, triples
		}
	}
}

// seedSynth ingests a synthetic corpus of n events and distils it by a memory GC.
func seedSynth(t *testing.T, ctx context.Context, k *kernel.Kernel, store *sqlite.Store, n int) {
	t.Helper()
	corpus := memtest.Synth(memtest.SynthOptions{Events: n, Seed: 11, Sessions: 12})
	for _, s := range corpus.Sessions {
		if _, err := k.Service().CreateSession(ctx, client.Session{ID: s.ID, Title: s.Title, Channel: s.Channel, Partner: s.Partner,
			Scope: s.Scope.String()}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []int64
	for i := 0; i < len(corpus.Events); i += 100 {
		var batch []kernel.IngestEvent
		for j, e := range corpus.Events[i:min(i+100, len(corpus.Events))] {
			content := e.Content
			if e.Role == mem3.RoleUser {
				// The users' messages speak of people, places and work, as a person's
				// do: the LLM-free rules read facts only from such first-person statements
				// (the corpus's pseudo-words alone give them nothing to name).
				content = synthFacts(i+j) + " " + content
			}
			batch = append(batch, kernel.IngestEvent{Session: e.Session, Role: e.Role, Content: content, Partner: e.Partner, Time: e.Time})
		}
		evs, err := k.Ingest(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			ids = append(ids, e.ID)
		}
	}
	k.SettleMemory()
	// The conversations are old (2023): all but the last few events have long gone cold (the
	// cooling of the memory GC waits for a day of idleness by the wall clock).
	if err := store.SetLayer(ctx, ids[:len(ids)-40], mem3.LayerL2); err != nil {
		t.Fatal(err)
	}
	rep, err := k.Service().MemoryGC(ctx)
	// The turns' facts were read as they were ingested: distillation adds to or confirms them.
	if err != nil || rep.Triples+rep.Confirmed == 0 {
		t.Fatalf("distilling the fixture: %+v, %v", rep, err)
	}
	t.Logf("fixture: %d events in %d sessions; memory GC %+v", len(corpus.Events), len(corpus.Sessions), rep)
}

// synthName is the i-th of a family of distinct made-up names ("Kalo", "Mirenta"…) of kind k.
func synthName(i, k int) string {
	syl := []string{"ka", "lo", "mi", "ren", "ta", "so", "vi", "na", "do", "ri", "be", "lu"}
	var b strings.Builder
	n := i*7 + k*1009
	for range 2 + (i+k)%2 {
		b.WriteString(syl[n%len(syl)])
		n /= len(syl)
	}
	b.WriteString(syl[(i+3*k)%len(syl)])
	name := b.String()
	return strings.ToUpper(name[:1]) + name[1:] + strconv.Itoa(i%97)
}

// synthFacts is the i-th owner statement: a friend who moved somewhere, or a visit, or work.
func synthFacts(i int) string {
	switch i % 3 {
	case 0:
		return fmt.Sprintf("My friend %s moved to %s.", synthName(i, 1), synthName(i, 2))
	case 1:
		return fmt.Sprintf("I visited %s with %s last spring.", synthName(i, 2), synthName(i, 1))
	}
	return fmt.Sprintf("I work at %s now.", synthName(i, 3))
}

// TestStarMapRealWindow renders a synthetic memory's star map in the real app under Xvfb (full
// variant, then the client variant against homed): the view's model holds every entity and
// triple of the fixture, a drag pans at a measured frame rate, and the screenshot is saved.
func TestStarMapRealWindow(t *testing.T) {
	in := newInstall(t, xserver(t))
	llm := llmtest.NewServer(t)
	entities, triples := seedStarMemory(t, in, llm.URL())
	t.Logf("fixture graph: %d entities, %d triples", entities, triples)
	holdsAll := func(m map[string]any) bool {
		return m["entities"] == float64(entities) && m["triples"] == float64(triples)
	}

	g := in.startGUI("hologram", "", "--data", in.data)
	_, x, y, w, h := in.window("^HologramAgent$")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "chat"}, nil)
	chat := in.drawn()
	in.do("mousemove", strconv.Itoa(x+w-60), strconv.Itoa(y+25), "click", "1")
	in.do("key", "alt+2")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "starmap"}, nil)
	sky := g.waitTrace(map[string]any{"kind": "starmap"}, holdsAll)
	t.Logf("full variant: star map of %v stars and %v links (layout %v ms, %v iterations)", sky["nodes"], sky["edges"], sky["layout_ms"], sky["iterations"])
	shot := in.screenshot("starmap", chat)

	// Search: the sky flies to the star and the side panel shows what memory holds about it.
	in.do("mousemove", strconv.Itoa(x+200), strconv.Itoa(y+66), "click", "1")
	in.do("type", "--delay", "15", "Alice")
	in.do("key", "Return")
	g.waitTrace(map[string]any{"kind": "starmap_selected", "label": "Alice"}, nil)
	in.do("key", "Tab") // the focus leaves the entry: its blinking cursor would keep the screen from settling
	in.screenshot("starmap-search", shot)

	// Pan: press in the sky and drag for a while; the app reports the frames drawn meanwhile.
	cx, cy := x+w*35/100, y+h/2
	// One xdotool run: a move every 16 ms for about 1.5 s.
	drag := []string{"mousemove", strconv.Itoa(cx), strconv.Itoa(cy), "mousedown", "1"}
	for i := range 90 {
		drag = append(drag, "mousemove", strconv.Itoa(cx+(i%30)*4), strconv.Itoa(cy+(i%30)*2), "sleep", "0.016")
	}
	in.do(append(drag, "mouseup", "1")...)
	rate := g.waitTrace(map[string]any{"kind": "sky_drag"}, nil)
	t.Logf("panning under Xvfb: %v frames in %v ms = %.1f fps (reported; Xvfb caps it); %v drag events, %v ms rasterising",
		rate["frames"], rate["ms"], rate["fps"], rate["events"], rate["raster_ms"])
	if rate["frames"].(float64) < 2 {
		t.Errorf("a drag drew %v frames", rate["frames"])
	}
	if d := diffFraction(in.drawn(), shot); d < 0.01 {
		t.Errorf("the sky did not move when dragged (%.2f%% of pixels changed)", 100*d)
	}
	// A turn about Alice, then the inspector: what that turn recalled from memory.
	in.do("key", "alt+1")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "chat"}, nil)
	llm.Script(llmtest.Reply{Text: "Alice mostly talks about her plans and her health."})
	in.chat(x, y, w, h, "What does Alice usually talk about?")
	g.waitTrace(map[string]any{"kind": "message", "window": "main", "role": "assistant",
		"text": "Alice mostly talks about her plans and her health."}, nil)
	in.do("mousemove", strconv.Itoa(x+w-60), strconv.Itoa(y+25), "click", "1")
	in.do("key", "alt+3")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "memory"}, nil)
	in.drawn()
	in.do("mousemove", strconv.Itoa(x+206), strconv.Itoa(y+106), "click", "1") // the "Last turn recalled" tab
	in.screenshot("memory", shot)
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}

	// The client variant shows the same sky from homed.
	addr, tokenFile := in.homed()
	g = in.startGUI("hologram-client", "", "--remote", "http://"+addr, "--token-file", tokenFile)
	_, x, y, w, _ = in.window("^HologramAgent$")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "chat"}, nil)
	in.drawn()
	in.do("mousemove", strconv.Itoa(x+w-60), strconv.Itoa(y+25), "click", "1")
	in.do("key", "alt+2")
	sky = g.waitTrace(map[string]any{"kind": "starmap"}, holdsAll)
	t.Logf("client variant: star map of %v stars and %v links", sky["nodes"], sky["edges"])
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}
}

// chatgptPeople are the people, places and things of the synthetic ChatGPT export.
var chatgptPeople = []struct{ name, rel, city, work, pet, hobby string }{
	{"Maria", "sister", "Lisbon", "the city hospital", "Bruno", "climbing"},
	{"Tom", "brother", "Berlin", "Acme", "Pixel", "chess"},
	{"Jonas", "friend", "Hamburg", "Nordwind", "Luna", "sailing"},
	{"Priya", "colleague", "Bangalore", "Hologram Labs", "Mango", "painting"},
	{"Carla", "boss", "Madrid", "Hologram Labs", "Toro", "tennis"},
	{"Wei", "neighbour", "Shanghai", "Tencent", "Doudou", "photography"},
	{"Lena", "cousin", "Vienna", "the opera", "Strudel", "singing"},
	{"Omar", "friend", "Cairo", "Nile Travel", "Simba", "football"},
}

// chatgptExport is a ChatGPT conversations.json (the format `waiter memory import --format
// chatgpt` reads) of a made-up owner's chats: who they are, where they live and work, and for
// each person of chatgptPeople a few conversations about them — deterministic.
func chatgptExport() string {
	type msg struct{ role, text string }
	var convs [][]msg
	convs = append(convs, []msg{{"user", "My name is Sasha. I live in Porto and I work at Hologram Labs."},
		{"assistant", "Nice to meet you, Sasha."}, {"user", "I have a cat named Miso. I like green tea."}, {"assistant", "Miso is a lovely name."}})
	for _, p := range chatgptPeople {
		convs = append(convs,
			[]msg{{"user", "My " + p.rel + " is called " + p.name + "."}, {"assistant", "Tell me about " + p.name + "."},
				{"user", p.name + " lives in " + p.city + " and works at " + p.work + "."}, {"assistant", "Noted."}},
			[]msg{{"user", p.name + " has a dog named " + p.pet + "."}, {"assistant", "Cute."},
				{"user", p.name + " loves " + p.hobby + ". I visited " + p.city + " with " + p.name + " last spring."}, {"assistant", "Sounds fun."}},
			[]msg{{"user", "I met " + p.name + " for dinner. " + p.name + ", my " + p.rel + ", is moving to " + p.city + " next year."}, {"assistant", "Good luck to them."}},
		)
	}
	var b strings.Builder
	b.WriteString("[")
	t := int64(1709287200)
	for c, conv := range convs {
		if c > 0 {
			b.WriteString(",")
		}
		id := "conv" + strconv.Itoa(c)
		fmt.Fprintf(&b, `{"id":%q,"conversation_id":%q,"title":"Chat %d","create_time":%d,"update_time":%d,"current_node":"m%d","mapping":{`,
			id, id, c, t, t+int64(len(conv))*30, len(conv)-1)
		b.WriteString(`"root":{"id":"root","message":null,"parent":null,"children":["m0"]}`)
		for k, m := range conv {
			parent, children := "root", "[]"
			if k > 0 {
				parent = "m" + strconv.Itoa(k-1)
			}
			if k+1 < len(conv) {
				children = `["m` + strconv.Itoa(k+1) + `"]`
			}
			text, _ := json.Marshal(m.text)
			fmt.Fprintf(&b, `,"m%d":{"id":"m%d","message":{"id":"m%d","author":{"role":%q},"create_time":%d,"content":{"content_type":"text","parts":[%s]},"recipient":"all","metadata":{}},"parent":%q,"children":%s}`,
				k, k, k, m.role, t+int64(k)*30, text, parent, children)
		}
		b.WriteString("}}")
		t += 86400
	}
	b.WriteString("]")
	return b.String()
}

// seedChatGPT imports chatgptExport and distils it (CoolAll, the LLM-free rules).
func seedChatGPT(t *testing.T, ctx context.Context, k *kernel.Kernel) {
	t.Helper()
	rep, err := k.Service().ImportMemory(ctx, client.FormatChatGPT, strings.NewReader(chatgptExport()))
	if err != nil || rep.Events == 0 {
		t.Fatalf("importing the ChatGPT export: %+v, %v", rep, err)
	}
	gc, err := k.Service().CoolAll(ctx, nil)
	// The turns' facts were read as the export was imported: distillation adds to or confirms them.
	if err != nil || gc.Triples+gc.Confirmed == 0 {
		t.Fatalf("distilling the ChatGPT export: %+v, %v", gc, err)
	}
	t.Logf("ChatGPT export: %d events imported; distilled %+v", rep.Events, gc)
}

// TestStarMapChatGPTWindow shows the star map of an imported ChatGPT export in the real app
// under Xvfb and saves the screenshot (build/screenshots/starmap-chatgpt.png).
func TestStarMapChatGPTWindow(t *testing.T) {
	in := newInstall(t, xserver(t))
	llm := llmtest.NewServer(t)
	entities, triples := withStarKernel(t, in, llm.URL(), func(ctx context.Context, k *kernel.Kernel, _ *sqlite.Store) {
		seedChatGPT(t, ctx, k)
	})
	t.Logf("graph: %d entities, %d triples", entities, triples)
	g := in.startGUI("hologram", "", "--data", in.data)
	_, x, y, w, _ := in.window("^HologramAgent$")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "chat"}, nil)
	chat := in.drawn()
	in.do("mousemove", strconv.Itoa(x+w-60), strconv.Itoa(y+25), "click", "1")
	in.do("key", "alt+2")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "starmap"}, nil)
	sky := g.waitTrace(map[string]any{"kind": "starmap"}, func(m map[string]any) bool { return m["entities"] == float64(entities) })
	t.Logf("star map of %v stars and %v links", sky["nodes"], sky["edges"])
	in.do("mousemove", strconv.Itoa(x+w-20), strconv.Itoa(y+25)) // the pointer off the sky
	worlds := in.screenshot("starmap-chatgpt", chat)
	// The timeline: facts by valid-from.
	in.do("mousemove", strconv.Itoa(x+489), strconv.Itoa(y+106), "click", "1")
	in.do("mousemove", strconv.Itoa(x+w-20), strconv.Itoa(y+25))
	in.screenshot("starmap-chatgpt-timeline", worlds)
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}
}
