//go:build integration

package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/kerneltest"
)

// sentImages reads the fake provider's log: for the last chat request whose messages hold
// marker, the roles of its messages and the data URLs of its image_url parts, by message index.
func sentImages(t *testing.T, log, marker string) (roles []string, images map[int][]string) {
	t.Helper()
	fh, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	found := false
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), []byte(marker)) {
			continue
		}
		var rec struct {
			Body struct {
				Messages []struct {
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			} `json:"body"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Body.Messages == nil {
			continue
		}
		found, roles, images = true, nil, map[int][]string{}
		for i, m := range rec.Body.Messages {
			roles = append(roles, m.Role)
			var parts []struct {
				Type     string `json:"type"`
				ImageURL struct {
					URL string `json:"url"`
				} `json:"image_url"`
			}
			if json.Unmarshal(m.Content, &parts) != nil {
				continue
			}
			for _, p := range parts {
				if p.Type == "image_url" {
					images[i] = append(images[i], p.ImageURL.URL)
				}
			}
		}
	}
	if !found {
		t.Fatalf("the fake provider saw no request holding %q", marker)
	}
	return roles, images
}

// TestImagesReachVisionModels: with a provider whose model takes images (`--vision yes`), an
// image attached with `waiter ask --attach` reaches the model as an image_url data URL of the
// file's bytes beside its text, and an MCP tool's image result (server-everything's
// get-tiny-image) follows the tool message in a user message; with `--vision no` neither is
// sent, the text alone going; every request is one fake_openai.py (which refuses what real
// servers refuse) accepts.
func TestImagesReachVisionModels(t *testing.T) {
	everything := kerneltest.NPMPeer(t, "@modelcontextprotocol/server-everything")
	fake := startFakeOpenAI(t)
	e := newEnv(t)
	e.start()
	var pic bytes.Buffer
	if err := pngEncode(&pic); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(e.root, "cake.png")
	if err := os.WriteFile(img, pic.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := e.waiter("", nil, "plugin", "add", "everything", "--command", "node '"+everything+"' stdio"); code != 0 {
		t.Fatalf("plugin add: %d %s%s", code, out, errOut)
	}
	e.waitPlugin("everything", "running", func(p client.Plugin) bool {
		return p.State == "running" && contains(p.Tools, "get-tiny-image")
	})
	wantURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pic.Bytes())
	for _, tc := range []struct{ vision string }{{"yes"}, {"no"}} {
		t.Run("vision "+tc.vision, func(t *testing.T) {
			out, errOut, code := e.waiter("", []string{"HOLOGRAM_API_KEY=sk-vision"}, "provider", "add", "fake", "--base-url", fake.url, "--model", "fake-1", "--vision", tc.vision)
			if code != 0 {
				t.Fatalf("provider add: %d %s%s", code, out, errOut)
			}
			list, _, _ := e.waiter("", nil, "provider", "list")
			if !strings.Contains(list, "IMAGES") || !strings.Contains(strings.Split(list, "\n")[1], tc.vision) {
				t.Fatalf("provider list:\n%s", list)
			}

			marker := "what is in the picture " + tc.vision
			if _, errOut, code := e.waiter("", nil, "ask", "--attach", img, marker); code != 0 {
				t.Fatalf("ask --attach: exit %d: %s", code, errOut)
			}
			roles, images := sentImages(t, fake.log, marker)
			last := len(roles) - 1
			switch {
			case tc.vision == "yes" && (len(images[last]) != 1 || images[last][0] != wantURL):
				t.Fatalf("vision model: the user message's images %d, want the file's bytes as a data URL", len(images[last]))
			case tc.vision == "no" && len(images) != 0:
				t.Fatalf("text model: images sent %v", images)
			}

			marker = "CALL get-tiny-image {}"
			if got := e.ask(marker); !strings.HasPrefix(got, "DONE ") && !strings.HasPrefix(got, "PONG ") {
				t.Fatalf("tool image turn: %q", got)
			}
			roles, images = sentImages(t, fake.log, `"role": "tool"`)
			last = len(roles) - 1
			switch tc.vision {
			case "yes":
				if roles[last] != "user" || roles[last-1] != "tool" || len(images[last]) != 1 || !strings.HasPrefix(images[last][0], "data:image/png;base64,") {
					t.Fatalf("vision model: roles %v, images %v", roles, images)
				}
			case "no":
				if roles[last] != "tool" || len(images) != 0 {
					t.Fatalf("text model: roles %v, images %v", roles, images)
				}
			}
			// Either way the tool's image is stored with its result, as an image block.
			var hist []client.Message
			e.waiterJSON(&hist, "history", "--json")
			var tool *client.Message
			for i := range hist {
				if hist[i].Role == "tool" {
					tool = &hist[i]
				}
			}
			if tool == nil || len(tool.Blocks) != 1 || tool.Blocks[0].Kind != "image" || tool.Blocks[0].MIME != "image/png" {
				t.Fatalf("the tool's result as stored: %+v", tool)
			}
		})
	}
}
