//go:build integration

package kernel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
)

// colourPNG is a w×h PNG of one colour.
func colourPNG(t testing.TB, c color.RGBA, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 255
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// clipDir is a colour's direction in the test model's space: its CLIP-normalised pixel.
func clipDir(c color.RGBA) [3]float64 {
	var v [3]float64
	var n float64
	for i, x := range []uint8{c.R, c.G, c.B} {
		v[i] = (float64(x)/255 - float64(embed.CLIPMean[i])) / float64(embed.CLIPStd[i])
		n += v[i] * v[i]
	}
	for i := range v {
		v[i] /= math.Sqrt(n)
	}
	return v
}

// TestImageVectorsEndToEnd is the plumbing test of issue 34 (the test model's weights are
// designed, so it shows the path works, not that a real CLIP model ranks well): 100 image blocks
// of distinct colours in memory, the CLIP-like test model chosen, the worker embeds every image
// in the background; a text query naming a colour ranks the event of the matching image first
// among the 100, through the kernel's memory search over HTTP, the image named in the hit;
// an image's OCR text still finds it by BM25; the thumbnail is served; Forget takes its image
// vectors with it; a picture attached to a chat message is embedded as it arrives; switching to
// a text-only model deletes the image vectors of the old space.
func TestImageVectorsEndToEnd(t *testing.T) {
	rt := testRuntime(t)
	bge, clip := testModels(t)
	dir := t.TempDir()
	models, err := embed.NewManager(embed.ManagerOptions{Dir: filepath.Join(dir, "data", "models"), Hubs: []string{"http://127.0.0.1:9"}, Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	k := newEmbKernel(t, embOptions{Dir: dir, Deps: kernel.EmbeddingDeps{Models: models, Runtime: rt}})
	c := serveHTTP(t, k.Kernel)
	if _, err := c.CreateSession(ctx, client.Session{ID: "photos"}); err != nil {
		t.Fatal(err)
	}

	// 100 colours: pure red, green and blue (the targets), then 97 others whose direction in the
	// model's space is not near any target's (a colour between a target and CLIP's mean colour
	// points the same way and would tie with it).
	targets := map[string]color.RGBA{"red": {255, 0, 0, 255}, "green": {0, 255, 0, 255}, "blue": {0, 0, 255, 255}}
	colours := []color.RGBA{targets["red"], targets["green"], targets["blue"]}
	near := func(c color.RGBA) bool {
		for _, tc := range targets {
			a, b := clipDir(c), clipDir(tc)
			if a[0]*b[0]+a[1]*b[1]+a[2]*b[2] > 0.97 {
				return true
			}
		}
		return false
	}
	for i := 0; len(colours) < 100; i++ {
		c := color.RGBA{uint8(37 + 53*i%219), uint8(11 + 97*i%233), uint8(71 + 29*i%181), 255}
		if !near(c) {
			colours = append(colours, c)
		}
	}
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var evs []memory.Event
	for i, col := range colours {
		b := memory.Block{Kind: memory.BlockImage, MIME: "image/png", Name: fmt.Sprintf("photo-%03d.png", i), Data: colourPNG(t, col, 64+i%5*8, 48)}
		if i == 50 {
			b.Text = "invoice number 4711" // its OCR text
		}
		evs = append(evs, memory.Event{Session: "photos", Role: memory.RoleUser, Content: fmt.Sprintf("picture %d", i),
			Layer: memory.LayerL2, Time: t0.Add(time.Duration(i) * time.Minute), Tokens: 4, Blocks: []memory.Block{b}})
	}
	evs = append(evs, memory.Event{Session: "photos", Role: memory.RoleUser, Content: "the fox ran over the hill", Layer: memory.LayerL2,
		Time: t0.Add(2 * time.Hour), Tokens: 6})
	stored, err := k.Store.AppendEvents(ctx, evs)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := c.ImportModel(ctx, clipID, clip); err != nil {
		t.Fatalf("ImportModel: %v", err)
	}
	st, err := c.UseModel(ctx, clipID)
	if err != nil {
		t.Fatalf("UseModel: %v", err)
	}
	start := time.Now()
	settle(t, k)
	t.Logf("100 images (and 101 events) embedded in %v", time.Since(start).Round(time.Millisecond))
	if have, total, err := k.Store.BlockVectorCounts(ctx, st.Space); err != nil || have != 100 || total != 100 {
		t.Fatalf("BlockVectorCounts = %d of %d, %v; want every image embedded", have, total, err)
	}
	if es, err := c.Embedding(ctx); err != nil || es.Images == nil || es.Images.Done != 100 || es.Images.Total != 100 || es.Images.Running {
		t.Fatalf("Embedding = %+v, %v; want 100 of 100 images embedded", es, err)
	}

	for _, q := range []struct{ query, colour string }{
		{"red", "red"}, {"绿草地", "green"}, {"a photo of the blue sky", "blue"},
	} {
		want := stored[map[string]int{"red": 0, "green": 1, "blue": 2}[q.colour]]
		hits, err := c.SearchMemory(ctx, client.MemoryQuery{Text: q.query, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != want.ID {
			t.Fatalf("search %q: %+v; want the %s image's event %d first", q.query, hits, q.colour, want.ID)
		}
		h := hits[0]
		if len(h.Images) != 1 || h.Images[0].Block != want.Blocks[0].ID || !h.Images[0].Matched || h.Images[0].Name != want.Blocks[0].Name ||
			h.Images[0].MIME != "image/png" || !strings.Contains(h.Reason, "image") {
			t.Fatalf("search %q: first hit %+v; want its image named, matched", q.query, h)
		}
		t.Logf("%q → %s (%s)", q.query, h.Images[0].Name, h.Reason)
	}

	// The hit's thumbnail, over HTTP.
	thumb, err := c.Thumbnail(ctx, stored[0].Blocks[0].ID)
	if err != nil {
		t.Fatalf("Thumbnail: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(thumb))
	if err != nil {
		t.Fatalf("thumbnail is not a PNG: %v", err)
	}
	if r, g, b, _ := img.At(10, 10).RGBA(); img.Bounds().Dx() != 64 || img.Bounds().Dy() != 48 || r>>8 != 255 || g>>8 != 0 || b>>8 != 0 {
		t.Fatalf("thumbnail of the red 64×48 picture: %v, colour %d %d %d", img.Bounds(), r>>8, g>>8, b>>8)
	}
	if _, err := c.Thumbnail(ctx, "0123456789abcdef"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("Thumbnail of an unknown block = %v, want ErrNotFound", err)
	}

	// The OCR text is found by BM25, and the hit shows its image (not matched by its vector).
	hits, err := c.SearchMemory(ctx, client.MemoryQuery{Text: "invoice 4711", K: 3})
	if err != nil || len(hits) == 0 || hits[0].ID != stored[50].ID || len(hits[0].Images) != 1 || hits[0].Images[0].Block != stored[50].Blocks[0].ID {
		t.Fatalf("search by OCR text = %+v, %v; want picture 50 with its image", hits, err)
	}
	// Text-only events are found as before.
	if hits, err := c.SearchMemory(ctx, client.MemoryQuery{Text: "fox", K: 3}); err != nil || len(hits) == 0 || hits[0].ID != stored[100].ID || len(hits[0].Images) != 0 {
		t.Fatalf("search fox = %+v, %v", hits, err)
	}

	// Forget the red picture: its image vector goes with it, and red finds it no more.
	if _, err := c.Forget(ctx, []int64{stored[0].ID}); err != nil {
		t.Fatal(err)
	}
	if have, total, err := k.Store.BlockVectorCounts(ctx, st.Space); err != nil || have != 99 || total != 99 {
		t.Fatalf("after Forget: BlockVectorCounts = %d of %d, %v; want 99 of 99", have, total, err)
	}
	hits, err = c.SearchMemory(ctx, client.MemoryQuery{Text: "red", K: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.ID == stored[0].ID {
			t.Fatalf("the forgotten red picture is still found: %+v", hits)
		}
	}

	// A picture attached to a chat message is embedded as it arrives (in the background).
	fake := llmtest.NewServer(t)
	if _, err := c.AddProvider(ctx, client.ProviderConfig{Name: "fake", BaseURL: fake.URL(), Model: "fake-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(ctx, client.ChatRequest{Session: "photos", Input: "look at this", Attachments: []client.Attachment{
		{Kind: "image", Name: "new-picture.png", MIME: "image/png", Data: colourPNG(t, targets["red"], 32, 32)}}}, nil); err != nil {
		t.Fatalf("Chat with a picture: %v", err)
	}
	settle(t, k)
	if have, total, err := k.Store.BlockVectorCounts(ctx, st.Space); err != nil || have != 100 || total != 100 {
		t.Fatalf("after a chat with a picture: BlockVectorCounts = %d of %d, %v; want 100 of 100", have, total, err)
	}
	hits, err = c.SearchMemory(ctx, client.MemoryQuery{Text: "red", K: 5})
	if err != nil || len(hits) == 0 || len(hits[0].Images) != 1 || hits[0].Images[0].Name != "new-picture.png" || !hits[0].Images[0].Matched {
		t.Fatalf("search red after the chat = %+v, %v; want the new (red) picture first", hits, err)
	}

	// A text-only model: the images have no vectors in its space, the clip space's go, and
	// recall of the words goes on.
	if _, err := c.ImportModel(ctx, bgeID, bge); err != nil {
		t.Fatalf("ImportModel(%s): %v", bgeID, err)
	}
	if _, err := c.UseModel(ctx, bgeID); err != nil {
		t.Fatal(err)
	}
	settle(t, k)
	if have, _, err := k.Store.BlockVectorCounts(ctx, st.Space); err != nil || have != 0 {
		t.Fatalf("after switching to %s: %d image vectors left in %s, %v", bgeID, have, st.Space, err)
	}
	if es, err := c.Embedding(ctx); err != nil || es.Images != nil {
		t.Fatalf("Embedding with a text-only model = %+v, %v; want no image progress", es, err)
	}
	if hits, err := c.SearchMemory(ctx, client.MemoryQuery{Text: "invoice", K: 3}); err != nil || len(hits) == 0 || hits[0].ID != stored[50].ID {
		t.Fatalf("search invoice with %s = %+v, %v", bgeID, hits, err)
	}
}
