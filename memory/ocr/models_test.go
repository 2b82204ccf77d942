package ocr

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory/embed"
)

// makeModelsDir creates dir holding the named model files (all if none), as placeholders.
func makeModelsDir(t *testing.T, dir string, files ...string) string {
	t.Helper()
	if len(files) == 0 {
		files = ModelFiles
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestResolveModelsDir(t *testing.T) {
	root := t.TempDir()
	old := systemModelsDir
	systemModelsDir = filepath.Join(root, "system")
	t.Cleanup(func() { systemModelsDir = old })
	makeModelsDir(t, root+"/conf")
	makeModelsDir(t, root+"/env")
	makeModelsDir(t, root+"/partial", DetModelFile, RecModelFile)
	makeModelsDir(t, root+"/bin/models/ocr")
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == ModelsDirEnv {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name       string
		configured string
		getenv     func(string) string
		exe        string
		system     bool
		want       string
		wantErr    []string
	}{
		{name: "configured wins", configured: root + "/conf", getenv: env(root + "/env"), want: root + "/conf"},
		{name: "env", getenv: env(root + "/env"), want: root + "/env"},
		{name: "system before the executable's dir", exe: root + "/bin/homed", system: true, want: root + "/system"},
		{name: "next to the executable", exe: root + "/bin/homed", want: root + "/bin/models/ocr"},
		{name: "explicit dir lacking files is an error",
			configured: root + "/partial",
			wantErr:    []string{"configured " + root + "/partial: missing " + ClsModelFile + ", " + DictFile, ModelsDirEnv, "make ocr-models"}},
		{name: "env dir that does not exist",
			getenv:  env(root + "/nope"),
			wantErr: []string{"$" + ModelsDirEnv + " " + root + "/nope: does not exist", "make ocr-models"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.system {
				makeModelsDir(t, root+"/system")
				t.Cleanup(func() { os.RemoveAll(root + "/system") })
			}
			got, err := ResolveModelsDir(tt.configured, tt.getenv, tt.exe)
			if tt.wantErr != nil {
				if !errors.Is(err, ErrModelsNotFound) {
					t.Fatalf("ResolveModelsDir = %q, %v; want ErrModelsNotFound", got, err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ResolveModelsDir = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestNewMissingModels(t *testing.T) {
	// No ONNX Runtime is needed to find out that the models are not there.
	rt := embed.NewORT("/nonexistent/"+embed.ORTLibraryName, 1)
	dir := t.TempDir()
	tests := []struct {
		name string
		dir  string
		want []string
	}{
		{"directory that does not exist", filepath.Join(dir, "nope"), []string{"not a directory", "make ocr-models", ModelsDirEnv}},
		{"a file, not a directory", makeModelsDir(t, filepath.Join(dir, "f"), "x") + "/x", []string{"not a directory", "make ocr-models"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(rt, tt.dir)
			if err == nil {
				e.Close()
				t.Fatal("New: no error")
			}
			if !errors.Is(err, ErrModelsNotFound) {
				t.Errorf("error %v does not wrap ErrModelsNotFound", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	if _, err := New(nil, dir); err == nil {
		t.Error("New(nil ORT): no error")
	}
}

// TestNewBadModels copies the real models dir with one file broken and checks that New
// refuses it with an error naming the file and how to get it back.
func TestNewBadModels(t *testing.T) {
	rt, models := requireAssets(t)
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(models, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	rec := read(RecModelFile)
	dict := read(DictFile)
	tests := []struct {
		name    string
		file    string
		content []byte // nil: remove the file
		is      error
		want    []string
	}{
		{"garbage detection model", DetModelFile, []byte("this is not a protobuf at all \x00\x01\x02"), nil,
			[]string{"detection model", DetModelFile, "make ocr-models"}},
		{"truncated recognition model", RecModelFile, rec[:len(rec)/3], nil,
			[]string{"recognition model", RecModelFile, "make ocr-models"}},
		{"Git LFS pointer", ClsModelFile, []byte("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 578966\n"), nil,
			[]string{"orientation model", "Git LFS pointer", "make ocr-models"}},
		{"empty model", DetModelFile, []byte{}, nil, []string{"empty", "make ocr-models"}},
		{"the orientation model in place of the detector", DetModelFile, read(ClsModelFile), nil,
			[]string{"detection model", "output shape", "make ocr-models"}},
		{"missing orientation model", ClsModelFile, nil, ErrModelsNotFound,
			[]string{ClsModelFile, "is missing", "make ocr-models"}},
		{"dictionary one line short", DictFile, dict[:strings.LastIndexByte(strings.TrimRight(string(dict), "\n"), '\n')+1], nil,
			[]string{"6625 classes", "gives 6624", "make ocr-models"}},
		{"missing dictionary", DictFile, nil, ErrModelsNotFound, []string{DictFile, "make ocr-models"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range ModelFiles {
				if f == tt.file {
					if tt.content != nil {
						if err := os.WriteFile(filepath.Join(dir, f), tt.content, 0o644); err != nil {
							t.Fatal(err)
						}
					}
					continue
				}
				if err := os.Symlink(filepath.Join(models, f), filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
			}
			e, err := New(rt, dir)
			if err == nil {
				e.Close()
				t.Fatal("New: no error")
			}
			t.Logf("error: %v", err)
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not wrap %v", err, tt.is)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
