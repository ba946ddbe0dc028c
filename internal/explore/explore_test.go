package explore

import (
	"context"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

func TestRowsAndContextFromARealRepo(t *testing.T) {
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, map[string]string{
		"go.mod":                  "module example.com/shop\n\ngo 1.22\n",
		"cart/cart.go":            "package cart\n\n// Total adds up the cart.\nfunc Total(prices []int) int { s := 0; for _, p := range prices { s += p }; return s }\n",
		"cart/cart_test.go":       "package cart\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) { if Total([]int{1, 2}) != 3 { t.Fatal() } }\n",
		"checkout/checkout.go":    "package checkout\n\nimport \"example.com/shop/cart\"\n\nfunc Pay(p []int) int { return cart.Total(p) }\n",
		"cmd/shop/main.go":        "package main\n\nimport \"example.com/shop/checkout\"\n\nfunc main() { _ = checkout.Pay(nil) }\n",
		"docs/readme.md":          "# shop\n",
		"vendor/x/y.go":           "package y\n",
		"cart/testdata/blob.bin":  "\x00\x01",
		"checkout/checkout_x.txt": "notes",
	})
	mp := Mapper{Options: repomap.Options{NoCache: true}}
	m, ranked, err := mp.Build(context.Background(), dir, "the cart Total is wrong when prices are negative")
	if err != nil {
		t.Fatal(err)
	}
	if len(ranked) == 0 || ranked[0].Path != "cart/cart.go" {
		t.Fatalf("ranked = %+v", ranked)
	}
	rows := Rows(m, ranked, []string{"patterns", "integration-points", "testing", "dependencies"})
	if len(rows) != 4 {
		t.Fatalf("rows = %d", len(rows))
	}
	want := map[string][]string{
		"E1": {"Most relevant files: cart/cart.go (Total)"},
		"E2": {"cart/cart.go is used by checkout/checkout.go", "Entry points:"},
		"E3": {"Test command: `go test ./...`", "cart/cart_test.go"},
		"E4": {"Manifests: go.mod", "checkout/checkout.go imports cart/cart.go"},
	}
	for _, r := range rows {
		if r.Status != plan.StatusCompleted || r.Wave != 1 || len(r.Findings) > 800 {
			t.Errorf("%s: status %s wave %d len %d", r.ID, r.Status, r.Wave, len(r.Findings))
		}
		for _, w := range want[r.ID] {
			if !strings.Contains(r.Findings, w) {
				t.Errorf("%s (%s) findings %q lack %q", r.ID, r.Angle, r.Findings, w)
			}
		}
	}
	rc := Context(m, ranked)
	if rc.TestCommand != "go test ./..." || rc.KeyFiles[0] != "cart/cart.go" || !strings.Contains(rc.Summary, "go.mod") {
		t.Errorf("context = %+v", rc)
	}
	types := map[string]bool{}
	for _, d := range rc.Discoveries {
		types[d.Type] = true
		if err := d.Validate(); err == nil {
			t.Errorf("a discovery without ts/worker validated: %+v", d)
		}
	}
	if !types["tech_stack"] || !types["test_command"] {
		t.Errorf("discovery types = %v", types)
	}
}

func TestEmptyQueryGivesMapOnly(t *testing.T) {
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, map[string]string{"a.py": "def f():\n    return 1\n"})
	m, ranked, err := Mapper{Options: repomap.Options{NoCache: true}}.Build(context.Background(), dir, "  ")
	if err != nil || m == nil || ranked != nil {
		t.Fatalf("m=%v ranked=%v err=%v", m != nil, ranked, err)
	}
	rows := Rows(m, nil, []string{"patterns"})
	if !strings.Contains(rows[0].Findings, "No file matched") {
		t.Errorf("findings = %q", rows[0].Findings)
	}
}

// TestRankingUsesHistory checks that the ranking a plan starts from counts
// past commits: of two files that match the requirement equally, the one a
// past fix like it changed comes first and says why.
func TestRankingUsesHistory(t *testing.T) {
	dir := t.TempDir()
	same := "def handle(request):\n    return request\n"
	repomaptest.InitRepo(t, dir, map[string]string{
		"app/orders.py":   same,
		"app/invoices.py": same,
		"setup.py":        "from setuptools import setup\n",
	})
	repomaptest.WriteFiles(t, dir, map[string]string{"app/invoices.py": same + "# rounding\n"})
	repomaptest.Git(t, dir, "commit", "-q", "-am", "Fix rounding of totals on refunds", "--no-gpg-sign")
	_, ranked, err := Mapper{Options: repomap.Options{NoCache: true}}.Build(context.Background(), dir, "Refund totals are rounded wrong in handle")
	if err != nil {
		t.Fatal(err)
	}
	if len(ranked) == 0 || ranked[0].Path != "app/invoices.py" {
		t.Fatalf("ranked = %+v, want app/invoices.py first", ranked)
	}
	if why := strings.Join(ranked[0].Reasons, "\n"); !strings.Contains(why, "Fix rounding of totals on refunds") {
		t.Errorf("reasons %q do not name the past commit", ranked[0].Reasons)
	}
}

// TestMemoMapsOnce checks that a Mapper with a Memo gives the context it
// built again for the same root and query, a copy its caller may change,
// and maps again for another query (keeping only the last); a Mapper
// without one maps every time.
func TestMemoMapsOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, map[string]string{
		"go.mod":       "module example.com/shop\n\ngo 1.22\n",
		"cart/cart.go": "package cart\n\n// Total adds up the cart.\nfunc Total(prices []int) int { return len(prices) }\n",
	})
	ctx := context.Background()
	query := "the invoice billing is wrong"
	names := func(mp Mapper, query string) string {
		t.Helper()
		rc, err := mp.Map(ctx, dir, query)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Join(rc.KeyFiles, " ")
		if len(rc.KeyFiles) > 0 {
			rc.KeyFiles[0] = "changed by the caller"
		}
		return s
	}
	memo := Mapper{Options: repomap.Options{NoCache: true}, Memo: &Memo{}}
	bare := Mapper{Options: repomap.Options{NoCache: true}}
	first := names(memo, query)
	// A file the first map did not see: the memo's context, for the same
	// root and query, does not name it.
	repomaptest.WriteFiles(t, dir, map[string]string{"billing/invoice.go": "package billing\n\n// Invoice bills the invoice.\nfunc Invoice() {}\n"})
	steps := []struct {
		name      string
		mp        Mapper
		query     string
		wantSeen  bool
		wantFirst bool
	}{
		{"same root and query: the memo's copy", memo, query, false, true},
		{"no memo: mapped again", bare, query, true, false},
		{"another query: mapped again", memo, query + " today", true, false},
		{"the first query after another: mapped again", memo, query, true, false},
		{"a new memo: mapped", Mapper{Options: repomap.Options{NoCache: true}, Memo: &Memo{}}, query, true, false},
	}
	for _, s := range steps {
		got := names(s.mp, s.query)
		if seen := strings.Contains(got, "billing/invoice.go"); seen != s.wantSeen {
			t.Errorf("%s: key files %q, billing/invoice.go seen %v, want %v", s.name, got, seen, s.wantSeen)
		}
		if (got == first) != s.wantFirst {
			t.Errorf("%s: key files %q, first map's %q", s.name, got, first)
		}
	}
}
