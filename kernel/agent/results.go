package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// Bounds on what one message puts before the model. A tool result (or an input) longer than
// [Options].MaxResultBytes reaches the model as its first resultHead and last resultTail bytes
// with a note between them; a tool result is stored whole as a text block that [ResultRead]
// pages.
const (
	DefaultMaxResultBytes = 64 << 10
	resultHead            = 16 << 10
	resultTail            = 4 << 10
	// ResultReadTool is the name of the tool that pages a stored result.
	ResultReadTool = "result_read"
	// maxReadLength is the most result_read returns at once: less than DefaultMaxResultBytes,
	// so that a page is never itself stored as a block.
	maxReadLength     = 32 << 10
	resultBlockPrefix = "result_"
)

// preview is s as the model sees it when it is longer than max bytes: a head, a note and a
// tail, cut on rune boundaries; note gets the number of bytes left out, the head's end and the
// tail's start.
func preview(s string, max int, note func(omitted, headEnd, tailStart int) string) string {
	if len(s) <= max {
		return s
	}
	head, tail := resultHead, resultTail
	if head+tail > max {
		head, tail = max*3/4, max/4
	}
	h := runeFloor(s, head)
	tl := runeCeil(s, len(s)-tail)
	return s[:h] + note(tl-h, h, tl) + s[tl:]
}

func runeFloor(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

func runeCeil(s string, i int) int {
	for i < len(s) && i > 0 && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// resultPreview is the text of a long tool result as the model sees it (the tool event's
// content); the whole result is the block id.
func resultPreview(result, id string, max int) string {
	return preview(result, max, func(omitted, headEnd, tailStart int) string {
		return fmt.Sprintf("\n\n[… %d bytes left out of a %d-byte result, stored whole as block %s: call %s with "+
			`{"id":%q,"offset":%d,"length":%d} to read on (the tail below starts at offset %d) …]`+"\n\n",
			omitted, len(result), id, ResultReadTool, id, headEnd, maxReadLength, tailStart)
	})
}

// inputPreview is a long user input as the model sees it (the event keeps it whole).
func inputPreview(input string, max int) string {
	return preview(input, max, func(omitted, _, _ int) string {
		return fmt.Sprintf("\n\n[… %d bytes of this %d-byte message left out here, to fit the model's context; the whole message is stored …]\n\n", omitted, len(input))
	})
}

// newResultID returns a fresh block id for a stored result.
func newResultID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return resultBlockPrefix + hex.EncodeToString(b[:])
}

// releaseAfter is the size of a stored result past which the agent hands the memory its copies
// took back to the system once the result is committed.
const releaseAfter = 1 << 20

// releaseLargeResults returns the heap a batch's large results took to the system: a 10 MiB MCP
// result passes through a frame, a decoded string, the result and the store's copy, and Go keeps
// the freed heap mapped for minutes, so homed's RSS stayed ~100 MB higher after one such call
// (measured with benchmarks/limits). A forced collection costs a few milliseconds, once per
// batch that brought a result over 1 MiB.
func releaseLargeResults(rec *recorder) {
	for _, o := range rec.outs {
		if len(o.full) > releaseAfter {
			debug.FreeOSMemory()
			return
		}
	}
}

// BlockReader reads a stored block with its content ([memory.BlockStore]'s Block).
type BlockReader interface {
	Block(ctx context.Context, id string) (memory.Block, error)
}

// MayRead decides whether the running turn may read a stored block; the caller's visibility
// rules (who the session belongs to, what a group session may see) go here.
type MayRead func(ctx context.Context, turn TurnRequest, b memory.Block) bool

// ResultRead returns the result_read tool: it pages a text block the store holds (a long tool
// result, which the model saw only the head and tail of). A turn reads only blocks of its own
// scope that may (when not nil) allows; any other id reads as unknown, so the tool tells nothing
// about blocks the session may not see.
func ResultRead(blocks BlockReader, may MayRead) Tool { return resultRead{blocks: blocks, may: may} }

type resultRead struct {
	blocks BlockReader
	may    MayRead
}

func (resultRead) Spec() llm.Tool {
	return llm.Tool{
		Name: ResultReadTool,
		Description: fmt.Sprintf("Reads part of a long tool result that was stored whole as a block (the result you saw names the block "+
			"and the offset to read on). Returns up to length bytes (at most %d) from offset, cut on character boundaries, "+
			"with the range read and the total size.", maxReadLength),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"id":{"type":"string","description":"the block id, e.g. result_0a1b…"},` +
			`"offset":{"type":"integer","minimum":0,"description":"byte offset to start at (default 0)"},` +
			`"length":{"type":"integer","minimum":1,"description":"bytes to read (default and most ` + fmt.Sprint(maxReadLength) + `)"}},` +
			`"required":["id"]}`),
	}
}

func (resultRead) ParallelSafe() bool { return true }

func (r resultRead) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a struct {
		ID     string `json:"id"`
		Offset int64  `json:"offset"`
		Length int64  `json:"length"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return "", fmt.Errorf("result_read: %w", err)
	}
	if a.Offset < 0 {
		return "", errors.New("result_read: offset must be 0 or more")
	}
	if a.Length <= 0 || a.Length > maxReadLength {
		a.Length = maxReadLength
	}
	unknown := fmt.Errorf("result_read: no stored result %q (ids are given in a cut result's note)", a.ID)
	if !strings.HasPrefix(a.ID, resultBlockPrefix) {
		return "", unknown
	}
	b, err := r.blocks.Block(ctx, a.ID)
	if errors.Is(err, memory.ErrNotFound) {
		return "", unknown
	}
	if err != nil {
		return "", fmt.Errorf("result_read: %w", err)
	}
	turn, _ := TurnFrom(ctx)
	if b.Kind != memory.BlockText || b.Scope != turn.Scope || (r.may != nil && !r.may(ctx, turn, b)) {
		return "", unknown
	}
	text := b.Text
	if a.Offset >= int64(len(text)) {
		return fmt.Sprintf("[offset %d is at or past the end: the result has %d bytes]", a.Offset, len(text)), nil
	}
	from := runeCeil(text, int(a.Offset))
	to := len(text)
	if int64(from)+a.Length < int64(to) {
		to = runeFloor(text, from+int(a.Length))
	}
	more := ""
	if to < len(text) {
		more = fmt.Sprintf("; read on from offset %d", to)
	}
	return fmt.Sprintf("[bytes %d–%d of %d of %s%s]\n%s", from, to, len(text), a.ID, more, text[from:to]), nil
}
