package embed

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestJiebaLoadCost loads jieba explicitly and logs the load time and the RSS it adds (run
// with -v to see them). It asserts only that the load works: timings are not checked.
func TestJiebaLoadCost(t *testing.T) {
	sharedTokenizer(t) // fails clearly first if the dictionaries are missing
	tk := NewTokenizer(TokenizerOptions{Logger: testLogger(t)})
	defer tk.Close()
	before := procStatusKB(t, "VmRSS")
	start := time.Now()
	if err := tk.Load(context.Background()); err != nil {
		t.Fatalf("Load: %v", err)
	}
	took := time.Since(start)
	after := procStatusKB(t, "VmRSS")
	if !tk.Loaded() {
		t.Fatal("Loaded() = false after Load")
	}
	t.Logf("jieba load %v; VmRSS %.1f MB → %.1f MB (+%.1f MB); VmHWM %.1f MB",
		took.Round(time.Millisecond), float64(before)/1024, float64(after)/1024,
		float64(after-before)/1024, float64(procStatusKB(t, "VmHWM"))/1024)
	tk.Close()
	t.Logf("VmRSS after Close %.1f MB", float64(procStatusKB(t, "VmRSS"))/1024)
}

// procStatusKB returns a kB field of /proc/self/status.
func procStatusKB(t *testing.T, field string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if ok && name == field {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			return kb
		}
	}
	t.Fatalf("/proc/self/status has no %s", field)
	return 0
}
