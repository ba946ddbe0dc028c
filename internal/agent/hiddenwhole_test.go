package agent

import "testing"

func TestHiddenWhole(t *testing.T) {
	t.Parallel()
	hidden := []string{"/root", "/home/alice/"}
	for _, tc := range []struct {
		p    string
		keep []string
		want bool
	}{
		{"/root", nil, true},
		{"/root/.pyenv", []string{"/tmp"}, true},
		{"/home/alice/keys", nil, true},
		{"/rootfs/keys", nil, false},
		{"/srv/tls", nil, false},
		// A folder the step is shown inside a home is read: its keys
		// would be seen.
		{"/root/.cargo", []string{"/root/.cargo/bin"}, false},
		{"/root/.cargo/bin", []string{"/root/.cargo"}, false},
		{"/root/x/../.cargo", []string{"/root/.cargo"}, false},
	} {
		if got := hiddenWhole(tc.p, hidden, tc.keep); got != tc.want {
			t.Errorf("hiddenWhole(%q, keep %q) = %v, want %v", tc.p, tc.keep, got, tc.want)
		}
	}
}
