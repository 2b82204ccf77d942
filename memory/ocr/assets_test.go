package ocr

import (
	"os"
	"sync"
	"testing"

	"github.com/hologramagent/hologram/memory/embed"
)

var testORT struct {
	sync.Once
	rt  *embed.ORT
	err error
}

// requireAssets returns the process's ONNX Runtime (loaded) and the OCR models directory of
// the checkout (or of an installation). Without them the test skips, or fails under
// HOLOGRAM_CI=1, naming the make target that fetches them.
func requireAssets(t testing.TB) (*embed.ORT, string) {
	t.Helper()
	missing := func(what, target string, err error) {
		t.Helper()
		msg := what + " missing, run `make " + target + "`: " + err.Error()
		if os.Getenv("HOLOGRAM_CI") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	lib, err := embed.ResolveORTLibrary("", os.Getenv, "")
	if err != nil {
		missing("ONNX Runtime", "onnxruntime", err)
	}
	dir, err := ResolveModelsDir("", os.Getenv, "")
	if err != nil {
		missing("OCR models", "ocr-models", err)
	}
	testORT.Do(func() {
		testORT.rt = embed.NewORT(lib, 2)
		testORT.err = testORT.rt.Load()
	})
	if testORT.err != nil {
		t.Fatalf("load ONNX Runtime: %v", testORT.err)
	}
	return testORT.rt, dir
}
