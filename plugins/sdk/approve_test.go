package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk"
	"github.com/hologramagent/hologram/plugins/sdk/sdktest"
)

// approver is a plugin whose tool "act" asks the owner with the arguments as the approval.
func approver() sdk.Plugin {
	return sdk.Plugin{Name: "asker", Tools: []sdk.Tool{{Name: "act", Run: func(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
		var a struct {
			Title, Detail string
			TimeoutMS     int `json:"timeout_ms"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return sdk.Result{}, err
		}
		res, err := k.Approve(ctx, sdk.Approval{Title: a.Title, Detail: a.Detail, Timeout: time.Duration(a.TimeoutMS) * time.Millisecond})
		var ce *sdk.CapabilityError
		if errors.As(err, &ce) {
			return sdk.Text("capability " + ce.Capability), nil
		}
		if err != nil {
			return sdk.Result{}, err
		}
		if !res.Approved {
			return sdk.Text("not done: " + res.Reason), nil
		}
		return sdk.Text("done (" + res.ID + ")"), nil
	}}}}
}

func TestApprove(t *testing.T) {
	var (
		mu    sync.Mutex
		asked []protocol.ApproveParams
	)
	k := sdktest.Start(t, approver(), sdktest.Options{Capabilities: []string{protocol.CapApprove},
		Approve: func(_ context.Context, p protocol.ApproveParams) (protocol.ApproveResult, error) {
			mu.Lock()
			asked = append(asked, p)
			mu.Unlock()
			if strings.Contains(p.Detail, "rm") {
				return protocol.ApproveResult{ID: "ap2", Reason: "denied by the owner"}, nil
			}
			return protocol.ApproveResult{ID: "ap1", Approved: true, Reason: "approved by the owner"}, nil
		}})
	ctx := context.Background()
	for _, tt := range []struct{ args, turn, want, wantErr string }{
		{`{"title":"Run","detail":"ls","timeout_ms":1500}`, "t1", "done (ap1)", ""},
		{`{"title":"Run","detail":"rm -rf x"}`, "", "not done: denied by the owner", ""},
		{`{"title":" ","detail":"ls"}`, "", "", "owner/approve: the title is empty"},
		{`{"title":"Run","timeout_ms":-5}`, "", "", "owner/approve: negative timeout"},
	} {
		got, err := k.ToolText(ctx, "act", tt.args, tt.turn)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("%s: %q %v, want %q", tt.args, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Fatalf("%s: %q %v, want %q", tt.args, got, err, tt.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[0] != (protocol.ApproveParams{Turn: "t1", Title: "Run", Detail: "ls", TimeoutMS: 1500}) || asked[1].Turn != "" {
		t.Fatalf("asked %+v", asked)
	}
}

func TestApproveNeedsTheCapability(t *testing.T) {
	k := sdktest.Start(t, approver(), sdktest.Options{Capabilities: []string{protocol.CapNotify}})
	if got, err := k.ToolText(context.Background(), "act", `{"title":"Run"}`, ""); err != nil || got != "capability approve" {
		t.Fatalf("%q %v", got, err)
	}
}
