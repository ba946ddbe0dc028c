package locate

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// A polyglot monorepo, generated: Go services are the majority, with a
// Python SDK (about a quarter of the code), a TypeScript frontend, Rust
// crates and a Java client. Every part implements the same concepts with
// the same words, as real monorepos do (the SDK mirrors the service), so
// words alone cannot tell the languages apart: the issue's evidence must.

// concept is one feature of the product, implemented in several languages.
type concept struct {
	pkg, noun, obj string
	verbs          []string
}

var concepts = []concept{
	{"limits", "printer", "digest", []string{"lookup", "format", "reset"}},
	{"quota", "ledger", "allowance", []string{"charge", "refund", "reserve"}},
	{"session", "token", "lease", []string{"refresh", "revoke", "issue"}},
	{"upload", "chunk", "checksum", []string{"split", "verify", "resume"}},
	{"cache", "entry", "eviction", []string{"evict", "touch", "expire"}},
	{"webhook", "delivery", "signature", []string{"sign", "retry", "deliver"}},
	{"metrics", "gauge", "sample", []string{"record", "flush", "export"}},
	{"billing", "invoice", "discount", []string{"apply", "total", "finalize"}},
	{"search", "index", "posting", []string{"tokenize", "merge", "query"}},
	{"audit", "event", "trail", []string{"append", "redact", "replay"}},
}

func title1(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// singular drops a plural's s ("limits" -> "limit").
func singular(s string) string { return strings.TrimSuffix(s, "s") }

// prose is a comment in the concept's words that every language's file
// carries.
func (c concept) prose() string {
	return fmt.Sprintf("%s %s keeps the %s of each %s: %s, %s and %s the %s when the %s changes",
		singular(c.pkg), c.noun, c.obj, c.noun, c.verbs[0], c.verbs[1], c.verbs[2], c.obj, c.noun)
}

func (c concept) goFiles(files map[string]string) {
	dir := "services/" + c.pkg + "/"
	typ := title1(c.noun)
	var b strings.Builder
	fmt.Fprintf(&b, "// Package %s: %s.\npackage %s\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n)\n\n", c.pkg, c.prose(), c.pkg)
	fmt.Fprintf(&b, "// %s holds the %s of a %s %s.\ntype %s struct {\n\t%s map[string][]byte\n\tcount int\n}\n\n", typ, c.obj, singular(c.pkg), c.noun, typ, c.obj)
	fmt.Fprintf(&b, "var errNo%s = errors.New(\"no %s for %s\")\n\n", title1(c.obj), c.obj, c.noun)
	for i, v := range c.verbs {
		fmt.Fprintf(&b, "// %s%s will %s the %s %s of the %s.\nfunc (p *%s) %s%s(key string) ([]byte, error) {\n",
			title1(v), title1(c.obj), v, singular(c.pkg), c.obj, c.noun, typ, title1(v), title1(c.obj))
		fmt.Fprintf(&b, "\t%s, ok := p.%s[key]\n\tif !ok {\n\t\treturn nil, fmt.Errorf(\"%s %s %%q: %%w\", key, errNo%s)\n\t}\n", c.obj, c.obj, v, c.obj, title1(c.obj))
		fmt.Fprintf(&b, "\tp.count += %d\n\treturn %s, nil\n}\n\n", i+1, c.obj)
	}
	files[dir+c.noun+".go"] = b.String()
	files[dir+"handler.go"] = fmt.Sprintf("package %s\n\nimport \"net/http\"\n\n// Handler serves the %s %s over HTTP: %s.\ntype Handler struct{ %s *%s }\n\n"+
		"// ServeHTTP answers a %s request with the %s.\nfunc (h Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {\n\t%s, err := h.%s.%s%s(r.URL.Query().Get(\"key\"))\n"+
		"\tif err != nil {\n\t\thttp.Error(w, err.Error(), http.StatusNotFound)\n\t\treturn\n\t}\n\tw.Write(%s)\n}\n",
		c.pkg, singular(c.pkg), c.noun, c.prose(), c.noun, typ, c.noun, c.obj, c.obj, c.noun, title1(c.verbs[0]), title1(c.obj), c.obj)
	files[dir+"store.go"] = fmt.Sprintf("package %s\n\n// Store persists each %s %s and its %s.\ntype Store struct{ rows map[string]*%s }\n\n"+
		"// Save%s writes the %s %s.\nfunc (s *Store) Save%s(key string, p *%s) { s.rows[key] = p }\n\n"+
		"// Load%s reads the %s back, to %s its %s.\nfunc (s *Store) Load%s(key string) *%s { return s.rows[key] }\n",
		c.pkg, singular(c.pkg), c.noun, c.obj, typ, typ, c.noun, c.obj, typ, typ, typ, c.noun, c.verbs[1], c.obj, typ, typ)
	files[dir+c.noun+"_test.go"] = fmt.Sprintf("package %s\n\nimport \"testing\"\n\nfunc Test%s%s(t *testing.T) {\n\tp := &%s{%s: map[string][]byte{}}\n\tif _, err := p.%s%s(\"k\"); err == nil {\n\t\tt.Fatal(\"want an error for a missing %s\")\n\t}\n}\n",
		c.pkg, title1(c.verbs[0]), title1(c.obj), typ, c.obj, title1(c.verbs[0]), title1(c.obj), c.obj)
}

// pyClass is the SDK's class name for a concept ("LimitPrinter").
func (c concept) pyClass() string { return title1(singular(c.pkg)) + title1(c.noun) }

func (c concept) pyFiles(files map[string]string) {
	dir := "sdk/python/acme/" + c.pkg + "/"
	var b strings.Builder
	fmt.Fprintf(&b, "\"\"\"%s.\"\"\"\n\n\nclass %s:\n    \"\"\"Client side of the %s %s.\"\"\"\n\n    def __init__(self, session):\n        self.session = session\n        self.%s = {}\n\n",
		c.prose(), c.pyClass(), singular(c.pkg), c.noun, c.obj)
	for _, v := range c.verbs {
		fmt.Fprintf(&b, "    def %s_%s(self, key):\n        \"\"\"%s the %s %s of the %s.\"\"\"\n        %s = self.%s.get(key)\n        if not isinstance(%s, bytes):\n            raise TypeError(\"%s must be bytes, not %%s\" %% type(%s).__name__)\n        return self.session.call(\"%s\", key, %s)\n\n",
			v, c.obj, title1(v), singular(c.pkg), c.obj, c.noun, c.obj, c.obj, c.obj, c.obj, c.obj, v, c.obj)
	}
	files[dir+c.noun+".py"] = b.String()
	files[dir+"__init__.py"] = fmt.Sprintf("from acme.%s.%s import %s\n\n__all__ = [\"%s\"]\n", c.pkg, c.noun, c.pyClass(), c.pyClass())
	files["sdk/python/tests/test_"+c.pkg+".py"] = fmt.Sprintf("from acme.%s import %s\n\n\ndef test_%s_%s():\n    p = %s(None)\n    p.%s_%s(\"k\")\n",
		c.pkg, c.pyClass(), c.verbs[0], c.obj, c.pyClass(), c.verbs[0], c.obj)
}

// tsPanel is the frontend's component for a concept ("DeliveryPanel").
func (c concept) tsPanel() string { return title1(c.noun) + "Panel" }

func (c concept) tsFiles(files map[string]string) {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s.\nimport { api } from \"../api\";\n\nexport class %s {\n  private %s: Map<string, string> = new Map();\n\n", c.prose(), c.tsPanel(), c.obj)
	fmt.Fprintf(&b, "  render%s(key: string): string {\n    const %s = this.%s.get(key);\n    return `<div class=\"%s\">${%s.length} ${%s}</div>`;\n  }\n\n", title1(c.obj), c.obj, c.obj, c.obj, c.obj, c.obj)
	for _, v := range c.verbs {
		fmt.Fprintf(&b, "  async %s%s(key: string): Promise<void> {\n    // %s the %s %s of the %s\n    this.%s.set(key, await api.%s(\"%s\", key));\n  }\n\n", v, title1(c.obj), v, singular(c.pkg), c.obj, c.noun, c.obj, v, c.pkg)
	}
	b.WriteString("}\n")
	files["web/src/"+c.pkg+"/"+c.tsPanel()+".ts"] = b.String()
}

// rsTable is the Rust crate's type for a concept ("PostingTable").
func (c concept) rsTable() string { return title1(c.obj) + "Table" }

func (c concept) rsFiles(files map[string]string) {
	var b strings.Builder
	fmt.Fprintf(&b, "//! %s.\n\nuse std::collections::HashMap;\n\npub struct %s {\n    %s: HashMap<String, Vec<u8>>,\n    count: usize,\n}\n\nimpl %s {\n", c.prose(), c.rsTable(), c.obj, c.rsTable())
	for i, v := range c.verbs {
		fmt.Fprintf(&b, "    /// %s the %s %s of the %s.\n    pub fn %s_%s(&mut self, key: &str) -> Option<&Vec<u8>> {\n        self.count -= %d;\n        self.%s.get(key)\n    }\n\n", title1(v), singular(c.pkg), c.obj, c.noun, v, c.obj, i+1, c.obj)
	}
	b.WriteString("}\n")
	files["crates/"+c.pkg+"/src/lib.rs"] = b.String()
}

// javaClient is the Java client's class for a concept ("EventClient").
func (c concept) javaClient() string { return title1(c.noun) + "Client" }

func (c concept) javaFiles(files map[string]string) {
	var b strings.Builder
	fmt.Fprintf(&b, "package com.acme.%s;\n\nimport java.util.HashMap;\nimport java.util.Map;\n\n/** %s. */\npublic class %s {\n    private final Map<String, byte[]> %s = new HashMap<>();\n\n", c.pkg, c.prose(), c.javaClient(), c.obj)
	for _, v := range c.verbs {
		fmt.Fprintf(&b, "    /** %s the %s %s of the %s. */\n    public byte[] %s%s(String key) {\n        byte[] %s = %s.get(key);\n        return %s.clone();\n    }\n\n", title1(v), singular(c.pkg), c.obj, c.noun, v, title1(c.obj), c.obj, c.obj, c.obj)
	}
	b.WriteString("}\n")
	files["clients/java/src/main/java/com/acme/"+c.pkg+"/"+c.javaClient()+".java"] = b.String()
}

// polyglotRepo is the generated monorepo: every concept in Go and Python,
// the first six in TypeScript, three in Rust and three in Java.
func polyglotRepo() map[string]string {
	files := map[string]string{
		"go.mod":                    "module github.com/acme/platform\n\ngo 1.22\n",
		"sdk/python/pyproject.toml": "[project]\nname = \"acme\"\n",
		"web/package.json":          "{\"name\": \"acme-web\"}\n",
		"web/src/api.ts":            "export const api = { call: (verb: string, pkg: string, key: string) => fetch(`/${pkg}/${verb}?key=${key}`) };\n",
		"README.md":                 "# Platform\n\nServices in Go, an SDK in Python, a frontend in TypeScript.\n",
	}
	for i, c := range concepts {
		c.goFiles(files)
		c.pyFiles(files)
		if i >= 4 {
			c.tsFiles(files)
		}
		if i >= 7 {
			c.rsFiles(files)
		}
		if i >= 7 || i == 2 {
			c.javaFiles(files)
		}
	}
	return files
}

// polyglotIssue is an issue as a user would write it, with the file the
// fix belongs in.
type polyglotIssue struct {
	name, lang, query, want string
}

var polyglotIssues = []polyglotIssue{
	// The regression of issue 31: a Python class and method, no path.
	{"python class.method", "Python", "LimitPrinter.lookup_digest raises TypeError when the digest is missing\n\n" +
		"`LimitPrinter.lookup_digest` raises TypeError: digest must be bytes, not NoneType, instead of returning nothing for an unknown key.",
		"sdk/python/acme/limits/printer.py"},
	{"python traceback", "Python", "Charging an allowance fails\n\n```\nTraceback (most recent call last):\n  File \"/home/me/app/main.py\", line 8, in <module>\n    ledger.charge_allowance(\"k\")\n" +
		"  File \"/home/me/.venv/lib/python3.11/site-packages/acme/quota/ledger.py\", line 14, in charge_allowance\n    raise TypeError(\"allowance must be bytes, not %s\" % type(allowance).__name__)\nTypeError: allowance must be bytes, not NoneType\n```\n",
		"sdk/python/acme/quota/ledger.py"},
	{"python prose", "Python", "SDK: refresh_lease on a revoked token should not call the server\n\n" +
		"With the Python SDK, `session.refresh_lease(key)` still calls the server after the token was revoked.\n```python\nfrom acme.session import SessionToken\nt = SessionToken(s)\nt.refresh_lease(\"k\")\n```\n",
		"sdk/python/acme/session/token.py"},
	{"python traceback in user code only", "Python", "verify fails for a missing chunk\n\n```\nTraceback (most recent call last):\n  File \"upload_all.py\", line 12, in <module>\n    chunk.verify_checksum(key)\n" +
		"TypeError: checksum must be bytes, not NoneType\n```\n",
		"sdk/python/acme/upload/chunk.py"},
	{"go panic", "Go", "Service crashes when refreshing a lease\n\n```\npanic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]\n\n" +
		"goroutine 42 [running]:\ngithub.com/acme/platform/services/session.(*Token).RefreshLease(0x0, {0xc0000a2000, 0x3})\n\t/build/services/session/token.go:31 +0x1d\n" +
		"github.com/acme/platform/services/session.Handler.ServeHTTP({0x0}, {0x7f1, 0xc0001}, 0xc000180000)\n\t/build/services/session/handler.go:12 +0x8a\n```\n",
		"services/session/token.go"},
	{"go prose", "Go", "ExportSample drops the gauge's last sample on flush\n\n" +
		"`Gauge.ExportSample` returns \"no sample for gauge\" right after `FlushSample`, though a sample was recorded.",
		"services/metrics/gauge.go"},
	{"go error text", "Go", "upload service: verify checksum fails for every chunk\n\n" +
		"Every request to the upload service answers 404 with `verify checksum \"abc\": no checksum for chunk`, from `(*Chunk).VerifyChecksum`.",
		"services/upload/chunk.go"},
	{"go name mirrored in every language", "Go", "ReserveAllowance answers an error for a key that exists\n\n" +
		"The quota service's ReserveAllowance says the allowance is missing right after ChargeAllowance stored it.",
		"services/quota/ledger.go"},
	{"typescript stack", "TypeScript", "Delivery panel is blank\n\n```\nUncaught TypeError: Cannot read properties of undefined (reading 'length')\n" +
		"    at DeliveryPanel.renderSignature (webpack:///./src/webhook/DeliveryPanel.ts:9:51)\n    at render (webpack:///./src/app.ts:30:7)\n```\n",
		"web/src/webhook/DeliveryPanel.ts"},
	{"typescript prose", "TypeScript", "Invoice panel shows the discount twice\n\n" +
		"In the web app, `renderDiscount()` on the invoice panel prints the discount's length and then the discount again; `applyDiscount` looks fine.",
		"web/src/billing/InvoicePanel.ts"},
	{"typescript name the SDK respells", "TypeScript", "flushSample never resolves in the gauge panel\n\n" +
		"`flushSample()` on the metrics gauge panel hangs when the API is slow.",
		"web/src/metrics/GaugePanel.ts"},
	{"rust panic", "Rust", "search crate: subtract with overflow when merging postings\n\n```\nthread 'main' panicked at 'attempt to subtract with overflow', crates/search/src/lib.rs:22:9\n" +
		"note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n```\n",
		"crates/search/src/lib.rs"},
	{"rust prose", "Rust", "TrailTable::redact_trail underflows its count\n\n`TrailTable::redact_trail` subtracts from `count` without checking it, so redacting an empty trail overflows.",
		"crates/audit/src/lib.rs"},
	{"java stack", "Java", "NullPointerException replaying an audit trail\n\n```\nException in thread \"main\" java.lang.NullPointerException\n" +
		"\tat com.acme.audit.EventClient.replayTrail(EventClient.java:21)\n\tat com.acme.Main.main(Main.java:9)\n```\n",
		"clients/java/src/main/java/com/acme/audit/EventClient.java"},
	{"java class.method a TypeScript file shares", "Java", "InvoiceClient.totalDiscount hands out the cached array\n\n" +
		"`InvoiceClient.totalDiscount(key)` returns a clone, but callers of `applyDiscount` see shared bytes.",
		"clients/java/src/main/java/com/acme/billing/InvoiceClient.java"},
	{"java prose", "Java", "Java client: revokeLease throws on an unknown key\n\n`TokenClient.revokeLease(\"missing\")` throws a NullPointerException from `lease.clone()`.",
		"clients/java/src/main/java/com/acme/session/TokenClient.java"},
}

// langFigures are Acc@1 and Acc@5 per language on the polyglot corpus.
type langFigures struct{ n, at1, at5 int }

func TestPolyglotCorpus(t *testing.T) {
	t.Parallel()
	dir, m := mapTree(t, polyglotRepo())
	ix := NewIndex(m)
	ix.root = dir
	figs := map[string]*langFigures{}
	for _, is := range polyglotIssues {
		got, err := ix.Rank(is.query, 200, Options{})
		if err != nil {
			t.Fatal(err)
		}
		rank := 0
		for i, r := range got {
			if r.Path == is.want {
				rank = i + 1
				break
			}
		}
		f := figs[is.lang]
		if f == nil {
			f = &langFigures{}
			figs[is.lang] = f
		}
		f.n++
		if rank == 1 {
			f.at1++
		}
		if rank >= 1 && rank <= 5 {
			f.at5++
		} else {
			t.Errorf("%s: %s is at rank %d (0: not in the top 200); top 5: %v", is.name, is.want, rank, pathsOf(got[:min(5, len(got))]))
		}
	}
	var langs []string
	for l := range figs {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	for _, l := range langs {
		f := figs[l]
		t.Logf("%-10s N %d  Acc@1 %.3f  Acc@5 %.3f", l, f.n, float64(f.at1)/float64(f.n), float64(f.at5)/float64(f.n))
	}
}

// TestOtherLanguageExplained checks that --explain says why a file in
// another language was held back.
func TestOtherLanguageExplained(t *testing.T) {
	t.Parallel()
	_, m := mapTree(t, polyglotRepo())
	got, err := NewIndex(m).Rank(polyglotIssues[0].query, 200, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.Path == "services/limits/printer.go" {
			if why := strings.Join(r.Reasons, "\n"); !strings.Contains(why, "in Go, while the issue points at Python") {
				t.Errorf("reasons of %s lack the hold-back: %q", r.Path, r.Reasons)
			}
			return
		}
	}
	t.Errorf("services/limits/printer.go not ranked: %v", pathsOf(got))
}
