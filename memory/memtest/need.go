package memtest

import (
	"os"
	"testing"
)

// NeedAsset stops a test whose tool or asset (ONNX Runtime, python3-onnx, the OCR models…) is
// missing: under HOLOGRAM_CI=1 (set by .ci/run) it fails, since CI installs everything; otherwise
// it skips. how says how to get what is missing; err is why it was not found.
func NeedAsset(t testing.TB, how string, err error) {
	t.Helper()
	if os.Getenv("HOLOGRAM_CI") == "1" {
		t.Fatalf("%s: %v", how, err)
	}
	t.Skipf("%s: %v", how, err)
}
