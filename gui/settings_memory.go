package gui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/data/binding"

	"github.com/hologramagent/hologram/kernel/client"
)

// MemoryTransfer is the state of a memory export or import: Running while it lasts, Progress a
// line such as "Exported 1.2 MB…" updated as bytes move, Status the outcome. When the size is
// known (a chat history import), Sized is set and Fraction goes from 0 to 1 as the file is read.
type MemoryTransfer struct {
	Running  binding.Bool
	Progress binding.String
	Status   SettingsStatus
	Sized    binding.Bool
	Fraction binding.Float
}

func newMemoryTransfer() MemoryTransfer {
	return MemoryTransfer{Running: binding.NewBool(), Progress: binding.NewString(), Status: newSettingsStatus(),
		Sized: binding.NewBool(), Fraction: binding.NewFloat()}
}

// memoryProgressEvery is how often the transferred size is shown.
const memoryProgressEvery = 200 * time.Millisecond

// countingWriter and countingReader count the bytes that pass.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// transfer runs fn while showing how many bytes moved (verb, translated: "Exported", "Read").
func (vm *SettingsVM) transfer(verb string, fn func(n *atomic.Int64) error) error {
	t := vm.Memory
	if running, _ := t.Running.Get(); running {
		return errors.New(T("An export or import is already running."))
	}
	_ = t.Fraction.Set(0)
	_ = t.Running.Set(true)
	defer t.Running.Set(false)
	var n atomic.Int64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(memoryProgressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				_ = t.Progress.Set(Tf("%s %s…", verb, chatSize(n.Load())))
			}
		}
	}()
	err := fn(&n)
	close(done)
	<-stopped // its last Set is done: two goroutines never update the label at once
	_ = t.Progress.Set("")
	return err
}

// ExportMemory writes the memory to w in format (client.FormatJSON, FormatJSONL or
// FormatMarkdown), secrets included only when asked.
func (vm *SettingsVM) ExportMemory(ctx context.Context, format string, includeSecrets bool, w io.Writer) error {
	if err := exportPrivate(w); err != nil {
		vm.Memory.Status.set(Tf("The export failed: %v", err), true)
		return fmt.Errorf("export memory: %w", err)
	}
	err := vm.transfer(T("Exported"), func(n *atomic.Int64) error {
		return vm.svc.ExportMemory(ctx, client.ExportRequest{Format: format, IncludeSecrets: includeSecrets}, countingWriter{w: w, n: n})
	})
	if err != nil {
		vm.Memory.Status.set(Tf("The export failed: %v", err), true)
		return fmt.Errorf("export memory: %w", err)
	}
	vm.Memory.Status.set(T("The memory was exported."), false)
	return nil
}

// exportPrivate makes the file w writes (a file dialog's writer, which Fyne creates 0644)
// readable by its owner only, before a byte of the memory is in it: an export holds every
// conversation, and provider keys when asked.
func exportPrivate(w io.Writer) error {
	u, ok := w.(interface{ URI() fyne.URI })
	if !ok || u.URI() == nil || u.URI().Scheme() != "file" {
		return nil
	}
	if err := os.Chmod(u.URI().Path(), 0o600); err != nil {
		return fmt.Errorf("make the file private: %w", err)
	}
	return nil
}

// ImportMemory reads a backup (client.FormatJSON, into an empty memory) or an MCP memory file
// (client.FormatJSONL, merged) from r.
func (vm *SettingsVM) ImportMemory(ctx context.Context, format string, r io.Reader) (client.ImportReport, error) {
	var rep client.ImportReport
	err := vm.transfer(T("Read"), func(n *atomic.Int64) error {
		var err error
		rep, err = vm.svc.ImportMemory(ctx, format, countingReader{r: r, n: n})
		return err
	})
	if err != nil {
		vm.Memory.Status.set(Tf("The import failed: %v", err), true)
		return rep, fmt.Errorf("import memory: %w", err)
	}
	vm.Memory.Status.set(Tf("Imported %d events, %d entities and %d facts (%d already there).", rep.Events, rep.Entities, rep.Triples, rep.Skipped), false)
	return rep, nil
}
