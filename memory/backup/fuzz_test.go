package backup_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hologramagent/hologram/memory/backup"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// FuzzImport feeds every importer an arbitrary document, as a file the owner picks may be:
// the full JSON backup (RestoreJSON, which must restore all or nothing), the MCP memory JSONL
// and the ChatGPT and Open WebUI chat exports. None panics; a refused full backup leaves the
// store empty.
func FuzzImport(f *testing.F) {
	for i, s := range []string{
		`{"format":"hologram-backup","version":1,"sessions":[{"id":"s","title":"t"}],"events":[{"id":1,"session":"s","role":"user","content":"hi","time":"2026-01-01T00:00:00Z"}]}`,
		`{"format":"hologram-backup","version":99}`,
		`{"type":"entity","name":"Alice","entityType":"person","observations":["likes tea"]}` + "\n" + `{"type":"relation","from":"Alice","to":"Bob","relationType":"knows"}` + "\n",
		`[{"title":"c","create_time":1700000000,"mapping":{"a":{"id":"a","message":{"author":{"role":"user"},"content":{"content_type":"text","parts":["你好"]},"create_time":1700000000},"children":["b"]},"b":{"id":"b","parent":"a","message":{"author":{"role":"assistant"},"content":{"parts":["hi"]}}}}}]`,
		`[{"id":"x","title":"w","chat":{"history":{"messages":{"m1":{"id":"m1","role":"user","content":"q","timestamp":1700000000}},"currentId":"m1"}}}]`,
		`{"events":[{"id":1,"session":"missing"}]}`,
		`[{"mapping":{"a":{"parent":"a","children":["a"]}}}]`,
	} {
		f.Add(uint8(i), []byte(s))
	}
	dir := f.TempDir()
	n := 0
	open := func() *sqlite.Store {
		n++
		s, err := sqlite.Open(context.Background(), filepath.Join(dir, "m"+strconv.Itoa(n)+".db"), sqlite.Options{})
		if err != nil {
			f.Fatal(err)
		}
		return s
	}
	empty, merge := open(), open()
	f.Cleanup(func() { empty.Close(); merge.Close() })
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		switch which % 4 {
		case 0:
			if _, err := backup.RestoreJSON(ctx, empty, bytes.NewReader(data), backup.Options{}); err == nil {
				empty.Close()
				empty = open() // restored: the next restore needs an empty store again
			}
		case 1:
			_, _ = backup.ImportJSONL(ctx, merge, bytes.NewReader(data))
		case 2:
			_, _ = backup.ImportChats(ctx, merge, backup.ChatGPT, bytes.NewReader(data), backup.ChatOptions{})
		case 3:
			_, _ = backup.ImportChats(ctx, merge, backup.OpenWebUI, bytes.NewReader(data), backup.ChatOptions{})
		}
	})
}
