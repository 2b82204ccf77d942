package gui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
)

func TestApprovals(t *testing.T) {
	f, c := uiKernel(t)
	ctx := context.Background()
	vm := NewApprovalsVM(c)
	if fresh, err := vm.Poll(ctx); err != nil || len(fresh) != 0 {
		t.Fatalf("no approvals: %v, %v", fresh, err)
	}
	ls := f.AddApproval(client.Approval{Plugin: "shell", Title: "run: ls -l /srv", Detail: "in /srv, timeout 30s",
		Channel: "qq", Partner: "group_1", Created: time.Now(), Expires: time.Now().Add(2 * time.Minute)})
	rm := f.AddApproval(client.Approval{Plugin: "shell", Title: "run: rm -r build", Created: time.Now()})
	fresh, err := vm.Poll(ctx)
	if err != nil || len(fresh) != 2 {
		t.Fatalf("first poll: %+v, %v", fresh, err)
	}
	if again, _ := vm.Poll(ctx); len(again) != 0 {
		t.Errorf("a second poll shows the same requests again: %+v", again)
	}
	if text := approvalText(fresh[0]); !strings.Contains(text, "The shell plugin asks: run: ls -l /srv") ||
		!strings.Contains(text, "in /srv, timeout 30s") || !strings.Contains(text, "Asked during a turn in qq · group_1.") ||
		!strings.Contains(text, "counts as a denial") {
		t.Errorf("approval text:\n%s", text)
	}

	// The dialog: Approve answers the kernel.
	test.NewTempApp(t)
	w := test.NewTempWindow(t, nil)
	w.Resize(fyne.NewSize(800, 600))
	showApproval(w, vm, ls)
	if !uiHasText(w, "The shell plugin asks: run: ls -l /srv") {
		t.Fatalf("dialog text: %q", uiTexts(w))
	}
	test.Tap(uiButton(t, w, "Approve"))
	vm.Wait()
	if got, _ := f.Approval(ls.ID); got.State != client.ApprovalApproved {
		t.Errorf("after Approve: %+v", got)
	}
	if st, _ := vm.Status.Get(); st != "Approved: run: ls -l /srv" {
		t.Errorf("status %q", st)
	}
	showApproval(w, vm, rm)
	test.Tap(uiButton(t, w, "Deny"))
	vm.Wait()
	if got, _ := f.Approval(rm.ID); got.State != client.ApprovalDenied {
		t.Errorf("after Deny: %+v", got)
	}
	if p, _ := vm.Pending.Get(); len(p) != 0 {
		t.Errorf("still pending: %+v", p)
	}
	// Answering one that is no longer pending says so.
	if err := vm.Answer(ctx, rm, true); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("answering twice: %v", err)
	}
	if st, _ := vm.Status.Get(); !strings.Contains(st, "no longer pending") {
		t.Errorf("status %q", st)
	}
}
