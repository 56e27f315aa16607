package workspace_test

import (
	"testing"

	"github.com/corebank/corebank/bank/workspace"
	"github.com/corebank/corebank/client"
)

// TestTypedClient: the public client's generated methods for the
// workspace routes work against the Manager, with a key or without.
func TestTypedClient(t *testing.T) {
	h := newHarness(t, workspace.Options{})
	ctx := t.Context()
	anon, err := client.New(h.srv.URL, h.ownKey, nil) // a key on create is ignored
	if err != nil {
		t.Fatal(err)
	}
	ws, err := anon.PostSandboxWorkspaces(ctx, client.PostSandboxWorkspacesJSONRequestBody{FakeClock: client.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(h.srv.URL, ws.ApiKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	clk, err := c.GetSandboxClock(ctx, nil)
	if err != nil || !ws.Clock.Fake {
		t.Fatalf("clock: %+v %v (workspace %+v)", clk, err, ws)
	}
	if _, err := c.DeleteSandboxWorkspacesById(ctx, ws.Id); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetSandboxClock(ctx, nil)
	if e, ok := err.(*client.APIError); !ok || e.StatusCode != 401 {
		t.Errorf("after delete: %v, want a 401 APIError", err)
	}
}
