package gui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/hologramagent/hologram/kernel/client"
)

// Chat history imports (ChatGPT, Open WebUI) in Settings → Memory.

// ImportChats imports a chat history file from path: format client.FormatChatGPT (a ChatGPT
// export's conversations.json, or the export's .zip) or client.FormatOpenWebUI (Open WebUI's
// chat export). The file streams to the kernel; Memory.Fraction follows the share read, one
// percent at a time, and Memory.Status says what was imported.
func (vm *SettingsVM) ImportChats(ctx context.Context, format, path string) (client.ImportReport, error) {
	f, err := client.OpenImportFile(path, format)
	if err != nil {
		vm.Memory.Status.set(Tf("The import failed: %v", err), true)
		return client.ImportReport{}, err
	}
	defer f.Close()
	_ = vm.Memory.Sized.Set(f.Size > 0)
	defer vm.Memory.Sized.Set(false)
	var rep client.ImportReport
	err = vm.transfer(T("Read"), func(n *atomic.Int64) error {
		var err error
		rep, err = vm.svc.ImportMemory(ctx, format, &fractionReader{r: f, n: n, size: f.Size, set: vm.Memory.Fraction.Set})
		return err
	})
	if err != nil {
		vm.Memory.Status.set(Tf("The import failed: %v", err), true)
		return rep, fmt.Errorf("import chats: %w", err)
	}
	c := rep.Chats
	if c == nil {
		c = &client.ChatsReport{}
	}
	msg := Tf("Imported %d conversations: %d messages in %d new sessions (%d messages already there).", c.Imported, rep.Events, rep.Sessions, rep.Skipped)
	if c.RefusedCount > 0 {
		msg += " " + Tf("%d conversations were refused; the first: %s", c.RefusedCount, c.Refused[0].Reason)
	}
	vm.Memory.Status.set(msg, c.RefusedCount > 0)
	return rep, nil
}

// fractionReader counts the bytes read into n and sets the fraction of size read each time it
// passes another percent.
type fractionReader struct {
	r    io.Reader
	n    *atomic.Int64
	size int64
	pct  int64
	set  func(float64) error
}

func (f *fractionReader) Read(p []byte) (int, error) {
	k, err := f.r.Read(p)
	n := f.n.Add(int64(k))
	if f.size > 0 {
		if pct := min(n*100/f.size, 100); pct > f.pct {
			f.pct = pct
			_ = f.set(float64(pct) / 100)
		}
	}
	return k, err
}

// CoolAll cools every session and distils every cold event now (client.Service.CoolAll), so
// that imported conversations reach the graph (and the star map) without waiting for the
// memory's idle time; Memory.Progress follows it and Memory.Status says what it made.
func (vm *SettingsVM) CoolAll(ctx context.Context) (client.GCReport, error) {
	t := vm.Memory
	if running, _ := t.Running.Get(); running {
		err := errors.New(T("An export or import is already running."))
		vm.Memory.Status.set(err.Error(), true)
		return client.GCReport{}, err
	}
	_ = t.Running.Set(true)
	defer t.Running.Set(false)
	rep, err := vm.svc.CoolAll(ctx, func(p client.GCProgress) {
		if p.Phase == client.GCPhaseCooling {
			_ = t.Progress.Set(Tf("Cooled %d of %d sessions…", p.Done, p.Total))
			return
		}
		_ = t.Progress.Set(Tf("Distilled %d events…", p.Done))
	})
	_ = t.Progress.Set("")
	if err != nil {
		vm.Memory.Status.set(Tf("Distillation failed: %v", err), true)
		return rep, fmt.Errorf("cool all: %w", err)
	}
	vm.Memory.Status.set(Tf("Distilled %d events into %d new facts.", rep.Distilled, rep.Triples), false)
	return rep, nil
}
