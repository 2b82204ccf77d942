package plugmain

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestRun: the logger writes JSON lines to stderr; a failure is printed after the plugin's
// name and returned.
func TestRun(t *testing.T) {
	var stderr bytes.Buffer
	boom := errors.New("configuration: bad HOLOGRAM_DEMO")
	err := Run(context.Background(), "demo", &stderr, func(_ context.Context, log *slog.Logger) error {
		log.Info("starting", "n", 1)
		log.Debug("not shown")
		return boom
	})
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if err != boom || len(lines) != 2 || !strings.HasPrefix(lines[0], `{"time":`) || !strings.HasSuffix(lines[0], `"level":"INFO","msg":"starting","n":1}`) ||
		lines[1] != "demo: configuration: bad HOLOGRAM_DEMO" {
		t.Fatalf("Run = %v; stderr:\n%s", err, stderr.String())
	}
	stderr.Reset()
	if err := Run(context.Background(), "demo", &stderr, func(context.Context, *slog.Logger) error { return nil }); err != nil || stderr.Len() != 0 {
		t.Fatalf("Run = %v; stderr %q", err, stderr.String())
	}
}

// helperEnv makes the test binary, run again, call Main as a plugin's main does.
const helperEnv = "PLUGMAIN_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "fail":
		Main("demo", func(context.Context, *slog.Logger) error { return errors.New("no roots") })
		os.Exit(3) // not reached: Main exits 1
	case "serve":
		Main("demo", func(ctx context.Context, log *slog.Logger) error {
			log.Info("serving")
			<-ctx.Done() // as sdk.Serve ends with its context
			log.Info("stopped")
			return nil
		})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestMainProcess runs Main in a child process: a failure exits 1 with the message on stderr;
// SIGTERM ends the plugin's context, and a clean return exits 0.
func TestMainProcess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("failure", func(t *testing.T) {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), helperEnv+"=fail")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || string(out) != "demo: no roots\n" {
			t.Fatalf("exit %v, output %q", err, out)
		}
	})
	t.Run("SIGTERM", func(t *testing.T) {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), helperEnv+"=serve")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(stderr)
		first, err := r.ReadString('\n')
		if err != nil || !strings.Contains(first, `"msg":"serving"`) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("first line %q %v", first, err)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(r)
		if err := cmd.Wait(); err != nil || !strings.Contains(string(rest), `"msg":"stopped"`) {
			t.Fatalf("exit %v, then %q", err, rest)
		}
	})
}
