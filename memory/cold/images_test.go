package cold

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory"
)

// imageDense is conceptDense with image blocks: images maps an event's content to its one
// image's cosine to any query, among a background of images whose cosines have mean 0.1 and
// sd 0.1. It returns the images whatever the query's viewer, so tests see Recall filter them.
type imageDense struct {
	*conceptDense
	images map[string]float64
}

func (d *imageDense) Search(ctx context.Context, q DenseQuery) (DenseResult, error) {
	res, err := d.conceptDense.Search(ctx, q)
	if err != nil || len(d.images) == 0 {
		return res, err
	}
	ids := make([]int64, 64)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	hits, err := d.m.Events(ctx, ids)
	if err != nil {
		return DenseResult{}, err
	}
	for _, h := range hits {
		if cos, ok := d.images[h.Event.Content]; ok {
			res.Images = append(res.Images, ImageHit{Block: fmt.Sprintf("img%d", h.Event.ID), Event: h.Event, Indexed: h.Indexed, Cos: cos})
		}
	}
	slices.SortStableFunc(res.Images, func(a, b ImageHit) int {
		if a.Cos > b.Cos {
			return -1
		}
		if a.Cos < b.Cos {
			return 1
		}
		return 0
	})
	res.ImageN, res.ImageMean, res.ImageSD = 50, 0.1, 0.1
	return res, nil
}

// TestImageRecall: an event whose image is near the query ranks though its words are not, its
// image named in the hit; an event both its words and its image match ranks first; images that
// do not stand out from the background, or that the viewer may not see, change nothing: the
// results and their scores are exactly those without images.
func TestImageRecall(t *testing.T) {
	ctx := context.Background()
	group := memory.Viewer{Group: "g"}
	printer, dog, puppy, secret := denseTurns[11][1], denseTurns[5][1], denseTurns[1][1], "a private photo"
	m, _ := fixture(t, denseTurns)
	if _, err := m.AppendEvents(ctx, []memory.Event{{Session: "private", Role: memory.RoleUser, Content: secret}}); err != nil {
		t.Fatal(err)
	}
	recall := func(images map[string]float64, query string) []Hit {
		t.Helper()
		d := &imageDense{conceptDense: &conceptDense{m: m}, images: images}
		hits, err := denseRecaller(t, m, d).Recall(ctx, Query{Text: query, Viewer: group, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}

	hits := recall(map[string]float64{printer: 0.9}, "canine")
	if got := contents(hits); len(got) < 3 || !slices.Contains(got[:3], printer) {
		t.Fatalf("Recall(canine) = %q; want the printer's picture among the first", got)
	}
	for _, h := range hits {
		if h.Event.Content == printer && (!reflect.DeepEqual(h.Images, []string{fmt.Sprintf("img%d", h.Event.ID)}) || !strings.Contains(h.Reason, "image 0.90, rank 1")) {
			t.Errorf("the printer's hit: %+v", h)
		}
		if h.Event.Content != printer && len(h.Images) != 0 {
			t.Errorf("%q has images %v", h.Event.Content, h.Images)
		}
	}
	if got := contents(recall(map[string]float64{dog: 0.9, printer: 0.95}, "dog")); got[0] != dog {
		t.Errorf("Recall(dog) with a picture of the dog = %q; want it first (words and image agree)", got)
	}

	// Nothing that counts on the image side: identical to recall without images.
	for _, q := range []string{"canine", "dog", "bread"} {
		want := recall(nil, q)
		got := recall(map[string]float64{puppy: 0.2, printer: 0.24, secret: 0.99}, q)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: with images below the floor or hidden\n%+v\nwant\n%+v", q, got, want)
		}
	}
}
