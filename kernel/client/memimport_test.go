package client_test

import (
	"archive/zip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// TestOpenImportFile: a ChatGPT export's .zip is opened to its conversations.json (the one
// nearest the top), a plain file is passed through, and anything else is refused clearly.
func TestOpenImportFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mkzip := func(name string, files map[string]string) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		zw := zip.NewWriter(f)
		for n, body := range files {
			w, _ := zw.Create(n)
			io.WriteString(w, body)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return p
	}
	plain := filepath.Join(dir, "conversations.json")
	os.WriteFile(plain, []byte(`[1]`), 0o600)
	tests := []struct {
		name, path, format string
		want, wantName     string
		wantErr            string
	}{
		{name: "plain", path: plain, format: client.FormatChatGPT, want: "[1]", wantName: plain},
		{name: "zip", path: mkzip("export.zip", map[string]string{"chat.html": "<html>", "deep/x/conversations.json": "[3]", "conversations.json": "[2]"}),
			format: client.FormatChatGPT, want: "[2]", wantName: "export.zip: conversations.json"},
		{name: "zip in a folder", path: mkzip("nested.zip", map[string]string{"export/conversations.json": "[4]"}), format: client.FormatChatGPT, want: "[4]",
			wantName: "nested.zip: export/conversations.json"},
		{name: "zip without conversations", path: mkzip("other.zip", map[string]string{"a.txt": "a"}), format: client.FormatChatGPT, wantErr: "holds no conversations.json"},
		{name: "zip for open webui", path: mkzip("owui.zip", map[string]string{"a.json": "[]"}), format: client.FormatOpenWebUI, wantErr: "only a ChatGPT export"},
		{name: "missing", path: filepath.Join(dir, "nope"), format: client.FormatChatGPT, wantErr: "no such file"},
		{name: "directory", path: dir, format: client.FormatChatGPT, wantErr: "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := client.OpenImportFile(tt.path, tt.format)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(tt.name, "zip") && !errors.Is(err, client.ErrInvalid) {
					t.Errorf("err %v is not ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(f)
			if err != nil || string(b) != tt.want || f.Size != int64(len(tt.want)) || !strings.HasSuffix(f.Name, tt.wantName) {
				t.Errorf("read %q (%v), size %d, name %q", b, err, f.Size, f.Name)
			}
			if err := f.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}
