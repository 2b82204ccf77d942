package protocol

import "testing"

func TestApproveCapability(t *testing.T) {
	for method, want := range map[string]string{
		MethodOwnerApprove: CapApprove,
		MethodOwnerNotify:  CapNotify, // the rest of owner/ stays notify's
	} {
		if got := CapabilityFor(method); got != want {
			t.Errorf("CapabilityFor(%s) = %q, want %q", method, got, want)
		}
	}
}
