package gui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// approvalPollInterval is how often the app asks the kernel for pending approvals.
const approvalPollInterval = 2 * time.Second

// ApprovalsVM holds the plugins' requests for the owner's approval (the shell plugin asks before
// every command): the pending ones as the kernel last listed them, which of them the owner has
// already been shown, and the outcome of the last answer. Only the owner's clients can answer;
// the desktop is one of them. Safe for concurrent use.
type ApprovalsVM struct {
	vmTasks
	ap client.ApprovalService

	// Pending are the pending approvals, oldest first.
	Pending binding.Item[[]client.Approval]
	Status  binding.String
	Failed  binding.Bool

	mu   sync.Mutex
	seen map[string]bool
}

// NewApprovalsVM returns the approvals' view-model over ap.
func NewApprovalsVM(ap client.ApprovalService) *ApprovalsVM {
	return &ApprovalsVM{ap: ap, Pending: newSliceBinding[client.Approval](), Status: binding.NewString(),
		Failed: binding.NewBool(), seen: map[string]bool{}}
}

// Poll lists the pending approvals and returns those not returned by an earlier Poll (to show
// each request once).
func (vm *ApprovalsVM) Poll(ctx context.Context) ([]client.Approval, error) {
	list, err := vm.ap.Approvals(ctx)
	if err != nil {
		return nil, fmt.Errorf("approvals: %w", err)
	}
	_ = vm.Pending.Set(list)
	vm.mu.Lock()
	defer vm.mu.Unlock()
	var fresh []client.Approval
	for _, a := range list {
		if !vm.seen[a.ID] {
			vm.seen[a.ID] = true
			fresh = append(fresh, a)
		}
	}
	return fresh, nil
}

// Answer approves or denies one request.
func (vm *ApprovalsVM) Answer(ctx context.Context, a client.Approval, approve bool) error {
	got, err := vm.ap.AnswerApproval(ctx, a.ID, approve)
	switch {
	case errors.Is(err, client.ErrNotFound):
		vm.report(Tf("The request of %s is no longer pending: it expired or was answered elsewhere.", a.Plugin), true)
		return err
	case err != nil:
		vm.report(Tf("Could not answer %s: %v", a.Plugin, err), true)
		return err
	case got.State == client.ApprovalApproved:
		vm.report(Tf("Approved: %s", a.Title), false)
	default:
		vm.report(Tf("Denied: %s", a.Title), false)
	}
	if list, err := vm.ap.Approvals(ctx); err == nil {
		_ = vm.Pending.Set(list)
	}
	return nil
}

func (vm *ApprovalsVM) report(msg string, failed bool) {
	_ = vm.Failed.Set(failed)
	_ = vm.Status.Set(msg)
}

// approvalText is what the owner is asked.
func approvalText(a client.Approval) string {
	text := Tf("The %s plugin asks: %s", a.Plugin, a.Title)
	if a.Detail != "" {
		text += "\n\n" + a.Detail
	}
	if a.Channel != "" || a.Session != "" {
		where := a.Session
		if a.Channel != "" {
			where = a.Channel
			if a.Partner != "" {
				where += " · " + a.Partner
			}
		}
		text += "\n\n" + Tf("Asked during a turn in %s.", where)
	}
	if !a.Expires.IsZero() {
		text += "\n" + Tf("No answer by %s counts as a denial.", a.Expires.Local().Format("15:04:05"))
	}
	return text
}

// showApproval asks the owner in a dialog on w.
func showApproval(w fyne.Window, vm *ApprovalsVM, a client.Approval) {
	msg := widget.NewLabel(approvalText(a))
	msg.Wrapping = fyne.TextWrapWord
	box := container.NewVBox(msg)
	d := dialog.NewCustomConfirm(T("Approve?"), T("Approve"), T("Deny"), box, func(ok bool) {
		vm.spawn(func(ctx context.Context) { _ = vm.Answer(ctx, a, ok) })
	}, w)
	d.Resize(fyne.NewSize(480, 260))
	d.Show()
}

// watchApprovals polls the pending approvals until ctx ends; each new one is shown in a dialog
// on the main window and, while the window is hidden, as a notification too. after is
// time.After in production.
func (a *App) watchApprovals(ctx context.Context, after func(time.Duration) <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-after(approvalPollInterval):
		}
		fresh, err := a.approvals.Poll(ctx)
		if err != nil {
			continue // the connection banner says why
		}
		for _, ap := range fresh {
			if a.isMainHidden() {
				a.notes.send(fyne.NewNotification(Tf("%s asks for your approval", ap.Plugin), excerpt(ap.Title, 200)))
			}
			fyne.Do(func() {
				if a.main != nil {
					showApproval(a.main, a.approvals, ap)
				}
			})
		}
	}
}
