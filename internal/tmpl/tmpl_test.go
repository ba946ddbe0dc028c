package tmpl

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"text/template"
)

type status string

type item struct {
	ID     string
	Status status
	Deps   []string
	N      int
	Note   *string
	Err    error
	Inner  *inner
	Tags   map[string]int
	Any    any
	Ok     bool
	Amount float64
}

type inner struct{ Label string }

type data struct {
	Title string
	Items []item
	Max   int
	Empty []item
	Nil   *inner
	M     map[string]string
	Embedded
}

type Embedded struct{ Promoted string }

func (i item) Method() string { return "called" }

func funcs() map[string]any {
	return map[string]any{
		"upper": strings.ToUpper,
		"text":  func(v any) string { return fmt.Sprintf("<%v>", v) },
		"join":  strings.Join,
		"cap": func(ids []string, n int) []string {
			if len(ids) > n {
				return ids[:n]
			}
			return ids
		},
		"mark": func(s status) string { return "mark:" + string(s) },
		"sum": func(xs ...int) int {
			t := 0
			for _, x := range xs {
				t += x
			}
			return t
		},
		"maybe": func(s string) (string, error) { return s + "!", nil },
	}
}

func sample() data {
	note := "a note"
	return data{
		Title: "Plan <1>",
		Max:   2,
		M:     map[string]string{"b": "2", "a": "1"},
		Items: []item{
			{ID: "T1", Status: "completed", Deps: nil, N: 3, Note: &note, Inner: &inner{"in"}, Tags: map[string]int{"z": 1, "a": 2}, Any: 5, Ok: true, Amount: 1.5},
			{ID: "T2", Status: "failed", Deps: []string{"T1", "T3", "T4"}, Err: errors.New("boom"), Any: "s"},
			{ID: "T3", Status: "pending"},
		},
		Embedded: Embedded{Promoted: "p"},
	}
}

// TestExecutesLikeTextTemplate runs the same templates through
// text/template and this package and expects the same bytes.
func TestExecutesLikeTextTemplate(t *testing.T) {
	cases := []string{
		"plain text only\n",
		"{{.Title}} {{.Max}} {{.Promoted}} {{.Nil}} {{.M.a}} {{.M.zz}}",
		"{{- /* a comment */ -}} {{.Title -}}  \n  {{- .Max}}",
		"{{range .Items}}[{{.ID}} {{.Status}} {{.N}} {{.Note}} {{.Err}} {{.Inner}} {{.Any}} {{.Ok}} {{.Amount}}]\n{{end}}",
		"{{range .Items}}{{if .Deps}}deps {{join .Deps \", \"}}{{else if .Err}}err {{.Err}}{{else}}none{{end}};{{end}}",
		"{{range .Empty}}x{{else}}empty{{end}} {{range .M}}{{.}}{{end}} {{range $k, $v := .M}}{{$k}}={{$v}},{{end}}",
		"{{range $i, $it := .Items}}{{$i}}:{{$it.ID}}:{{$.Title}} {{end}}",
		"{{with .Nil}}has{{else}}nil{{end}} {{with .Items}}{{len .}}{{end}} {{with $x := .Max}}{{$x}}{{end}}",
		"{{range .Items}}{{if eq .Status \"failed\"}}F{{else if ne .Status \"pending\"}}C{{else}}P{{end}}{{end}}",
		"{{range .Items}}{{if or .Deps .Err}}a{{end}}{{if and .Ok .Note}}b{{end}}{{if not .Ok}}c{{end}}{{or .Note \"-\"}}|{{end}}",
		"{{len .Items}} {{len .Title}} {{index .Items 1 | printf \"%v\"}} {{index .M \"b\"}} {{printf \"%s-%d\" .Title .Max}}",
		"{{range .Items}}{{join (cap .Deps $.Max) \",\"}} {{mark .Status}} {{text .Status}} {{text .Err}} {{text nil}}|{{end}}",
		"{{upper (printf \"%s!\" .Title)}} {{.Title | upper}} {{sum 1 2 3}} {{sum}} {{maybe .Title}}",
		"{{define \"row\"}}<{{.ID}}>{{end}}{{range .Items}}{{template \"row\" .}}{{end}}{{template \"row\" index .Items 0}}",
		"{{range .Items}}{{if lt .N 2}}lt{{end}}{{if ge .N 3}}ge{{end}}{{if eq .N 3 4}}eq{{end}}{{end}}",
		"{{$t := .Title}}{{$t = \"changed\"}}{{$t}} {{(index .Items 0).Inner.Label}}",
	}
	for i, text := range cases {
		want := execStd(t, text, sample())
		tp, err := ParseFS(fstest.MapFS{"t.tmpl": {Data: []byte(text)}}, funcs(), "*.tmpl")
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		got, err := tp.Render("t.tmpl", sample())
		if err != nil {
			t.Fatalf("case %d %q: %v", i, text, err)
		}
		if got != want {
			t.Errorf("case %d %q:\n got %q\nwant %q", i, text, got, want)
		}
	}
}

func execStd(t *testing.T, text string, d any) string {
	t.Helper()
	tp := template.Must(template.New("t.tmpl").Funcs(funcs()).Parse(text))
	var b bytes.Buffer
	if err := tp.Execute(&b, d); err != nil {
		t.Fatalf("text/template on %q: %v", text, err)
	}
	return b.String()
}

// TestNeverCallsMethods: a method is not a field; the error says so and
// where.
func TestNeverCallsMethods(t *testing.T) {
	tp, err := ParseFS(fstest.MapFS{"m.tmpl": {Data: []byte("line one\n{{range .Items}}{{.Method}}{{end}}")}}, nil, "*.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tp.Render("m.tmpl", sample())
	if err == nil || !strings.Contains(err.Error(), "can't evaluate field Method") || !strings.Contains(err.Error(), "m.tmpl:2") ||
		!strings.Contains(err.Error(), "methods are not called") {
		t.Errorf("error %v", err)
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"{{nosuch .Title}}", `function "nosuch" not defined`},
		{"{{.Title", "unclosed action"},
	} {
		_, err := ParseFS(fstest.MapFS{"e.tmpl": {Data: []byte(c.text)}}, funcs(), "*.tmpl")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "e.tmpl") {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"{{.Nope}}", "can't evaluate field Nope in type tmpl.data"},
		{"{{.Nil.Label}}", "nil pointer evaluating *tmpl.inner.Label"},
		{"{{upper .Max}}", "upper: argument 1 is a int, wants string"},
		{"{{join .Title}}", "join: too few arguments"},
		{"{{template \"none\"}}", `no such template "none"`},
		{"{{index .Items 9}}", "index 9 out of range"},
	} {
		tp, err := ParseFS(fstest.MapFS{"e.tmpl": {Data: []byte(c.text)}}, funcs(), "*.tmpl")
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		if _, err := tp.Render("e.tmpl", sample()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
	if _, err := ParseFS(fstest.MapFS{}, nil, "*.tmpl"); err == nil || !strings.Contains(err.Error(), "no template file matches *.tmpl") {
		t.Errorf("no files: %v", err)
	}
	if _, err := ParseFS(fstest.MapFS{"a.tmpl": {}}, map[string]any{"bad": func() {}}, "*.tmpl"); err == nil || !strings.Contains(err.Error(), "function bad must return") {
		t.Errorf("bad function: %v", err)
	}
	tp, _ := ParseFS(fstest.MapFS{"a.tmpl": {Data: []byte("x")}}, nil, "*.tmpl")
	if _, err := tp.Render("b.tmpl", nil); err == nil || !strings.Contains(err.Error(), "template b.tmpl is not defined") {
		t.Errorf("undefined: %v", err)
	}
}
