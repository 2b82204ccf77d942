package agent

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// Images reach a vision model with the message they belong to (llm.Message.Images): the turn's
// image attachments with its user message, a tool's images with its result. They are bounded
// per message; the others stay stored (blocks) and described in the message's text, which a
// provider whose model takes no images sends alone.
const (
	maxMessageImages = 8        // images sent with one message
	maxImageBytes    = 20 << 20 // one image (OpenAI's limit per image)
	maxMessageBytes  = 32 << 20 // all the images of one message
)

// imageSinkKey carries the *imageSink of the tool call running under a context.
type imageSinkKey struct{}

// imageSink collects the images a tool returns beside its text.
type imageSink struct {
	mu   sync.Mutex
	imgs []llm.Image
	size int
}

// AddResultImages attaches images to the result of the tool call running under ctx (an MCP
// server's image content, a screenshot): they go to a vision model with the result and are
// stored with it as image blocks. Images of a type vision models do not take, and those past
// the per-message bounds, are dropped (the tool's text should say what they were). It
// reports how many were kept; outside a tool call it keeps none.
func AddResultImages(ctx context.Context, imgs ...llm.Image) int {
	s, _ := ctx.Value(imageSinkKey{}).(*imageSink)
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, im := range imgs {
		if !sendable(im) || len(s.imgs) >= maxMessageImages || s.size+len(im.Data) > maxMessageBytes {
			continue
		}
		s.imgs = append(s.imgs, im)
		s.size += len(im.Data)
		n++
	}
	return n
}

func (s *imageSink) taken() []llm.Image {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.imgs
}

func sendable(im llm.Image) bool {
	return llm.VisionMIME(im.MIME) && len(im.Data) > 0 && len(im.Data) <= maxImageBytes
}

// blockImages are the image attachments of a turn to send with its user message.
func blockImages(bs []memory.Block) []llm.Image {
	var out []llm.Image
	size := 0
	for _, b := range bs {
		im := llm.Image{MIME: b.MIME, Data: b.Data, Name: b.Name}
		if b.Kind != memory.BlockImage || !sendable(im) || len(out) >= maxMessageImages || size+len(b.Data) > maxMessageBytes {
			continue
		}
		out = append(out, im)
		size += len(b.Data)
	}
	return out
}

// imageBlocks stores a tool's images with its result event, each with the text read in it.
func imageBlocks(call string, imgs []llm.Image, texts []string) []memory.Block {
	out := make([]memory.Block, 0, len(imgs))
	for i, im := range imgs {
		out = append(out, memory.Block{Kind: memory.BlockImage, Name: imageName(call, i, im), MIME: im.MIME, Data: im.Data, Text: at(texts, i)})
	}
	return out
}

func imageName(call string, i int, im llm.Image) string {
	if im.Name != "" {
		return im.Name
	}
	return "image " + strconv.Itoa(i+1) + " of " + call
}

func at(ss []string, i int) string {
	if i < len(ss) {
		return ss[i]
	}
	return ""
}

// maxImageTextRunes bounds the text read in one of a tool's images that its result shows.
const maxImageTextRunes = 4000

// readImages reads the text in a tool's images (Options.ImageText), so that memory indexes it
// with the result and a model that takes no images reads it; an image OCR cannot read has none
// (logged). ctx is the turn's, not the tool's, which may have run out.
func (a *Agent) readImages(ctx context.Context, imgs []llm.Image) []string {
	if a.opts.ImageText == nil || len(imgs) == 0 {
		return nil
	}
	out := make([]string, len(imgs))
	for i, im := range imgs {
		text, err := a.opts.ImageText(ctx, im.Data)
		if err != nil {
			a.log.Warn("OCR of a tool's image failed; it is kept without text", "name", im.Name, "err", err)
			continue
		}
		out[i] = strings.TrimSpace(text)
	}
	return out
}

// imageNotes is what a result adds for its images' text, as attachments show theirs.
func imageNotes(imgs []llm.Image, texts []string) string {
	var b strings.Builder
	for i, im := range imgs {
		if t := at(texts, i); t != "" {
			fmt.Fprintf(&b, "\n\n[text read in image %q]\n%s", imageName("the tool", i, im), truncate(t, maxImageTextRunes))
		}
	}
	return b.String()
}
