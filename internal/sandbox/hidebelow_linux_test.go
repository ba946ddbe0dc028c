package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHiddenBelowReadOnlyStaysHidden: a $TMPDIR inside the checkout
// ($GITHUB_WORKSPACE/.tmp) is hidden while the checkout is bound
// read-only; the bind of the checkout must not uncover it, or a step
// reads the other steps' private folders and homes there. What the step
// is granted below the hidden folder stays reachable.
func TestHiddenBelowReadOnlyStaysHidden(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	checkout, err := os.MkdirTemp("/srv", "planex-hidebelow-")
	if err != nil {
		t.Skipf("needs a folder outside /tmp and the homes, where the sandbox shows the host (/srv, writable as root): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(checkout) })
	if err := os.Chmod(checkout, 0o755); err != nil {
		t.Fatal(err)
	}
	hidden := filepath.Join(checkout, ".tmp")
	own := filepath.Join(hidden, "planex-step-own")
	other := filepath.Join(hidden, "planex-home-other")
	for _, d := range []string{own, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "other-steps-home-secret-6e0b"
	if err := os.WriteFile(filepath.Join(other, "credentials"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Policy{ReadOnly: []string{checkout}, Writable: []string{own}, Hide: []string{hidden}}
	script := `cat ` + other + `/credentials 2>/dev/null; ls -A ` + hidden + `; echo mine > ` + own + `/out`
	out, _ := run(t, s, p, own, []string{"PATH=" + os.Getenv("PATH")}, script)
	if strings.Contains(out, secret) || strings.Contains(out, "planex-home-other") {
		t.Errorf("the hidden folder below the read-only checkout is readable: %q", out)
	}
	if b, err := os.ReadFile(filepath.Join(own, "out")); err != nil || string(b) != "mine\n" {
		t.Errorf("the step's own folder below the hidden one: %q, %v (output %q)", b, err, out)
	}
}
