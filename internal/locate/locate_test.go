package locate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// project is a small Python package where each file owns a distinct topic,
// plus tests and docs that repeat the vocabulary.
var project = map[string]string{
	"setup.py":             "from setuptools import setup\nsetup(name='geo')\n",
	"geo/__init__.py":      "from geo.shapes import Circle, Polygon\n",
	"geo/shapes.py":        "from geo.units import to_metres\n\nclass Circle:\n    def area(self):\n        return 3.14 * self.radius ** 2\n\nclass Polygon:\n    def perimeter(self):\n        return sum(self.sides)\n",
	"geo/units.py":         "def to_metres(value, unit):\n    \"\"\"Convert a length in feet or inches to metres.\"\"\"\n    return value * FACTORS[unit]\n\nFACTORS = {'ft': 0.3048, 'in': 0.0254}\n",
	"geo/io/reader.py":     "import json\n\ndef read_geojson(path):\n    \"\"\"Read a GeoJSON file into shapes.\"\"\"\n    with open(path) as f:\n        return json.load(f)\n",
	"geo/projection.py":    "def mercator(lat, lon):\n    \"\"\"Project latitude and longitude with the Mercator projection.\"\"\"\n    return lat, lon\n",
	"tests/test_units.py":  "from geo.units import to_metres\n\ndef test_feet_to_metres():\n    assert to_metres(1, 'ft') == 0.3048\n",
	"tests/test_shapes.py": "from geo.shapes import Circle\n\ndef test_circle_area():\n    Circle().area()\n",
	"docs/units.rst":       "Units\n=====\nConvert feet, inches and metres with to_metres. Metres metres metres.\n",
	"docs/projection.rst":  "Mercator projection of latitude and longitude.\n",
}

func buildProject(t *testing.T) *repomap.Map {
	t.Helper()
	_, m := mapTree(t, project)
	return m
}

func TestRankSignals(t *testing.T) {
	ix := NewIndex(buildProject(t))
	cases := []struct {
		name   string
		query  string
		want   string // expected first file
		reason string // expected in the first file's reasons
	}{
		{"traceback", "Crash:\nTraceback (most recent call last):\n  File \"/home/u/app.py\", line 3, in <module>\n  File \"/usr/lib/python3/site-packages/geo/io/reader.py\", line 5, in read\nValueError", "geo/io/reader.py", "traceback frame 2 of 2"},
		{"file and line", "the bug is at geo/projection.py:2 when lat is 90", "geo/projection.py", "path quoted"},
		{"backticked identifier", "`to_metres` returns wrong values for yards", "geo/units.py", "defines to_metres"},
		{"dotted name", "geo.shapes.Polygon gives a wrong result for empty sides", "geo/shapes.py", "module geo.shapes"},
		{"class.method", "Calling Circle.area on a circle of radius one is off", "geo/shapes.py", "Circle"},
		{"plain words", "reading a geojson file fails", "geo/io/reader.py", "content matches"},
		{"prose over docs", "mercator projection of latitude is wrong", "geo/projection.py", "content matches"},
		// Two tests and the package import to_metres from geo/units.py.
		{"name in the title", "to_metres gives wrong values\nsomething about yards", "geo/units.py", "home of to_metres, named in the title"},
		// Nobody imports mercator: its home is the file defining it.
		{"defined name in the title", "mercator fails near the poles\nlatitude 90", "geo/projection.py", "home of mercator, named in the title"},
		// A title's capitalised first word names the function.
		{"capitalised first word of the title", "Mercator fails near the poles\nlatitude 90", "geo/projection.py", "home of mercator, named in the title"},
		{"imported name", "The `Polygon` perimeter is off for squares", "geo/shapes.py", "other files import Polygon from here"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ix.Rank(tc.query, 5, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || got[0].Path != tc.want {
				t.Fatalf("top = %v, want %s first", pathsOf(got), tc.want)
			}
			if !strings.Contains(strings.Join(got[0].Reasons, "\n"), tc.reason) {
				t.Errorf("reasons %q lack %q", got[0].Reasons, tc.reason)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Score > got[i-1].Score {
					t.Errorf("not sorted: %v", got)
				}
			}
		})
	}
}

func TestRankBaselineUsesContentOnly(t *testing.T) {
	ix := NewIndex(buildProject(t))
	// The docs page repeats "metres" most densely, so plain BM25 prefers it;
	// the full ranker prefers the code that defines the conversion.
	q := "metres conversion of feet"
	base, err := ix.Rank(q, 3, Options{Baseline: true})
	if err != nil {
		t.Fatal(err)
	}
	full, err := ix.Rank(q, 3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if base[0].Path != "docs/units.rst" {
		t.Errorf("baseline top = %v", pathsOf(base))
	}
	if full[0].Path != "geo/units.py" {
		t.Errorf("full top = %v", pathsOf(full))
	}
	for _, r := range base {
		if len(r.Reasons) != 1 || !strings.HasPrefix(r.Reasons[0], "bm25") {
			t.Errorf("baseline reasons = %q", r.Reasons)
		}
	}
}

func TestRankBadQueries(t *testing.T) {
	m := buildProject(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	huge := strings.Repeat("metres ", 20000) + "mercator"
	cases := []struct {
		name    string
		query   string
		opts    Options
		wantErr error
		wantLog string
		check   func(t *testing.T, rs []Ranked)
	}{
		{"empty", "", Options{}, ErrEmptyQuery, "", nil},
		{"whitespace", " \n\t ", Options{}, ErrEmptyQuery, "", nil},
		{"huge is truncated", huge, Options{Logger: log, MaxQueryBytes: 1000}, nil, "query truncated", func(t *testing.T, rs []Ranked) {
			// "mercator" sat beyond the cap, so it must not count.
			for _, r := range rs {
				if r.Path == "geo/projection.py" {
					t.Errorf("projection ranked from truncated text: %v", pathsOf(rs))
				}
			}
		}},
		{"non-UTF-8", "caf\xe9 \xff\xfe to_metres", Options{}, nil, "", func(t *testing.T, rs []Ranked) {
			if len(rs) == 0 || rs[0].Path != "geo/units.py" {
				t.Errorf("top = %v", pathsOf(rs))
			}
		}},
		{"no matching words", "zzzqqq", Options{}, nil, "", func(t *testing.T, rs []Ranked) {
			if len(rs) != 0 {
				t.Errorf("want no results, got %v", pathsOf(rs))
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			rs, err := Rank(m, tc.query, 5, tc.opts)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil && !strings.Contains(err.Error(), "query is empty") {
				t.Errorf("message %q", err)
			}
			if tc.wantLog != "" && !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("log %q lacks %q", logs.String(), tc.wantLog)
			}
			if tc.check != nil {
				tc.check(t, rs)
			}
		})
	}
	if _, err := Rank(nil, "x", 5, Options{}); err == nil {
		t.Error("nil map accepted")
	}
}

func TestExtractMentions(t *testing.T) {
	q := "See https://github.com/o/r/blob/main/pkg/a.py#L3 and `do_thing()` in pkg/b.py:12.\n" +
		"File \"/x/site-packages/pkg/c.py\", line 9\nastroid.nodes.Call fails; e.g. MyClass is bad, i.e. NOT good.\n"
	ms := extractMentions(q)
	var ps []string
	for _, p := range ms.paths {
		ps = append(ps, p.path)
	}
	if want := []string{"pkg/c.py", "github.com/o/r/blob/main/pkg/a.py", "pkg/b.py"}; !reflect.DeepEqual(ps, want) {
		t.Errorf("paths = %q, want %q", ps, want)
	}
	if want := []string{"astroid.nodes.Call"}; !reflect.DeepEqual(ms.dotted, want) {
		t.Errorf("dotted = %q, want %q", ms.dotted, want)
	}
	for id, min := range map[string]float64{"do_thing": 1.0, "MyClass": 0.8} {
		if ms.idents[id] < min {
			t.Errorf("ident %s strength %.2f < %.2f", id, ms.idents[id], min)
		}
	}
	for _, id := range []string{"fails", "bad"} {
		if _, ok := ms.idents[id]; ok {
			t.Errorf("prose word %q taken as identifier", id)
		}
	}
}

func TestEvaluate(t *testing.T) {
	repos := t.TempDir()
	src := filepath.Join(repos, "acme__geo")
	repomaptest.InitRepo(t, src, project)
	first := strings.TrimSpace(repomaptest.Git(t, src, "rev-parse", "HEAD"))
	// A later commit renames a file: the first instance must still see
	// the tree of its own base commit.
	repomaptest.Git(t, src, "mv", "geo/projection.py", "geo/proj.py")
	repomaptest.Git(t, src, "commit", "-q", "-m", "rename", "--no-gpg-sign")
	second := strings.TrimSpace(repomaptest.Git(t, src, "rev-parse", "HEAD"))
	ins := []Instance{
		{InstanceID: "geo-1", Repo: "acme/geo", BaseCommit: first, ProblemStatement: "mercator projection of latitude is wrong", GoldFiles: []string{"geo/projection.py"}},
		{InstanceID: "geo-2", Repo: "acme/geo", BaseCommit: second, ProblemStatement: "mercator projection of latitude is wrong", GoldFiles: []string{"geo/proj.py"}},
		{InstanceID: "geo-3", Repo: "acme/geo", BaseCommit: first, ProblemStatement: "`to_metres` is wrong for feet", GoldFiles: []string{"geo/shapes.py"}},
		{InstanceID: "gone", Repo: "acme/missing", BaseCommit: first, ProblemStatement: "x", GoldFiles: []string{"x.py"}},
	}
	data := filepath.Join(t.TempDir(), "ins.jsonl")
	var buf bytes.Buffer
	for _, in := range ins {
		b, _ := json.Marshal(in)
		buf.Write(append(b, '\n'))
	}
	if err := os.WriteFile(data, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadInstances(data)
	if err != nil || len(loaded) != 4 {
		t.Fatalf("LoadInstances: %d, %v", len(loaded), err)
	}
	var out bytes.Buffer
	quiet := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	rep, err := Evaluate(context.Background(), loaded, repos, 10, EvalOptions{WorkDir: t.TempDir(), Out: &out, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	metric := func(sys, repo string) Metrics {
		for _, m := range rep.Metrics {
			if m.System == sys && m.Repo == repo {
				return m
			}
		}
		t.Fatalf("no metrics for %s %q in %+v", sys, repo, rep.Metrics)
		return Metrics{}
	}
	full := metric(SystemLocate, "")
	if full.N != 3 || full.Acc1 < 0.66 || full.Acc1 > 0.67 {
		t.Errorf("full ranker metrics = %+v", full)
	}
	if per := metric(SystemLocate, "acme/geo"); per.N != full.N || per.Acc1 != full.Acc1 || per.MRR != full.MRR {
		t.Errorf("one repository: per-repository %+v differs from overall %+v", per, full)
	}
	// geo-3's gold file only imports the file that defines to_metres: it
	// ranks below it, but within the top five.
	if full.Acc5 != 1 || full.MRR >= 1 || full.MRR <= 2.0/3 {
		t.Errorf("full ranker metrics = %+v (outcomes %+v)", full, rep.Outcomes)
	}
	if base := metric(SystemBaseline, ""); base.N != 3 || base.MRR >= full.MRR {
		t.Errorf("baseline metrics = %+v", base)
	}
	if len(rep.Samples) != 3 {
		t.Errorf("samples = %d, want 3", len(rep.Samples))
	}
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0], "acme/missing") {
		t.Errorf("skipped = %q", rep.Skipped)
	}
	for _, w := range []string{"Acc@1", "Acc@3", "Acc@5", "Acc@10", "MRR@10", "planex locate", "BM25 baseline", "acme/geo", "(all)", "seconds per instance, map and index built (2)", "index loaded from cache (1)", "skipped gone"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, out.String())
		}
	}
}
