package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
	"time"
)

func TestRenderChangelog(t *testing.T) {
	long := "starmap: Barnes–Hut layout (multilevel, deterministic, incremental; 10k nodes/20k edges in 0.61 s on one core, planted-cluster ratio 0.05–0.21)"
	got := renderChangelog("hologram-server", "Ann Example <ann@example.org>", []changeEntry{
		{Version: "1.3.0+2.gabc1234", Changes: []string{"homed: sd_notify", long}, Time: time.Date(2026, 11, 30, 15, 50, 12, 0, time.UTC)},
		{Version: "1.3.0", Changes: []string{"first release"}, Time: time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)},
	})
	want := `hologram-server (1.3.0+2.gabc1234) unstable; urgency=medium

  * homed: sd_notify
  * starmap: Barnes–Hut layout (multilevel, deterministic, incremental; 10k
    nodes/20k edges in 0.61 s on one core, planted-cluster ratio 0.05–0.21)

 -- Ann Example <ann@example.org>  Mon, 30 Nov 2026 15:50:12 +0000

hologram-server (1.3.0) unstable; urgency=medium

  * first release

 -- Ann Example <ann@example.org>  Sun, 01 Nov 2026 08:00:00 +0000
`
	if got != want {
		t.Fatalf("changelog:\n%s\nwant:\n%s", got, want)
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"a b c", 3, []string{"a b", "c"}},
		{"  spaced   out  ", 20, []string{"spaced out"}},
		{"averyveryverylongword x", 5, []string{"averyveryverylongword", "x"}},
		{"北京 上海 广州", 5, []string{"北京 上海", "广州"}},
		{"", 10, nil},
	} {
		got := wrap(tc.in, tc.width)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

func TestDescriptionText(t *testing.T) {
	for _, v := range variants {
		d := v.descriptionText()
		lines := strings.Split(d, "\n")
		if lines[0] != v.Summary {
			t.Errorf("%s: first line %q, want the summary", v.Name, lines[0])
		}
		if len(v.Summary) > 80 {
			t.Errorf("%s: summary is %d characters (Debian: at most 80)", v.Name, len(v.Summary))
		}
		paras := 1
		for _, l := range lines[1:] {
			if len([]rune(l)) > 79 {
				t.Errorf("%s: line %q is longer than 79 columns", v.Name, l)
			}
			if l == "." {
				paras++
			}
		}
		if paras != len(v.Description) {
			t.Errorf("%s: %d paragraphs, want %d:\n%s", v.Name, paras, len(v.Description), d)
		}
	}
}

func TestGzipBytesIsDeterministicAndBest(t *testing.T) {
	data := bytes.Repeat([]byte("hologram "), 1000)
	a, err := gzipBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := gzipBytes(data)
	if !bytes.Equal(a, b) {
		t.Error("two compressions of the same data differ")
	}
	if a[8] != 2 {
		t.Errorf("gzip XFL = %d, want 2 (maximum compression, which lintian checks)", a[8])
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	back, _ := io.ReadAll(zr)
	if !bytes.Equal(back, data) || !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("round trip: equal=%v mtime=%v name=%q", bytes.Equal(back, data), zr.ModTime, zr.Name)
	}
}

func TestXMLText(t *testing.T) {
	got, err := xmlText(`a < b & "c"`)
	if err != nil || got != "a &lt; b &amp; &#34;c&#34;" {
		t.Errorf("xmlText = %q, %v", got, err)
	}
}
