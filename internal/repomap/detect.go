package repomap

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// manifestNames are files that declare a project, its dependencies or its build.
var manifestNames = map[string]string{
	"go.mod": "Go", "package.json": "JavaScript", "pyproject.toml": "Python", "setup.cfg": "Python",
	"setup.py": "Python", "requirements.txt": "Python", "Pipfile": "Python", "tox.ini": "Python",
	"Cargo.toml": "Rust", "pom.xml": "Java", "build.gradle": "Java", "build.gradle.kts": "Kotlin",
	"settings.gradle": "Java", "settings.gradle.kts": "Kotlin", "Gemfile": "Ruby", "composer.json": "PHP",
	"CMakeLists.txt": "C/C++", "meson.build": "C/C++", "Makefile": "Make", "GNUmakefile": "Make",
	"mix.exs": "Elixir", "pubspec.yaml": "Dart", "Package.swift": "Swift", "deno.json": "TypeScript",
	"build.sbt": "Scala", "Dockerfile": "Docker", "environment.yml": "Python", "tsconfig.json": "TypeScript",
}

func isCIFile(p string) bool {
	switch {
	case strings.HasPrefix(p, ".github/workflows/") && (strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")):
		return true
	case p == ".gitlab-ci.yml", p == ".travis.yml", p == "azure-pipelines.yml", p == "Jenkinsfile",
		p == "bitbucket-pipelines.yml", p == ".drone.yml", p == "appveyor.yml", p == ".appveyor.yml",
		p == "cloudbuild.yaml", p == "buildkite.yml":
		return true
	case strings.HasPrefix(p, ".circleci/") && strings.HasSuffix(p, ".yml"),
		strings.HasPrefix(p, ".buildkite/") && strings.HasSuffix(p, ".yml"):
		return true
	}
	return false
}

// listingFacts are what detection reads of the listing (before
// filtering: lock files are skipped from the map but tell which package
// manager is in use): the manifests and CI files, the names at the
// repository's root with each top-level directory as "dir/", sorted, and
// whether a conftest.py is anywhere. They are taken before the map is
// built, so the map can filter the listing in place into the paths it
// reads instead of holding a second list of every path's header while
// it reads them (1.6 MB at 100,000 files).
type listingFacts struct {
	manifests, ciFiles []string
	root               []string
	conftest           bool
}

// factsOf takes listingFacts from listed.
func factsOf(listed []string) listingFacts {
	var f listingFacts
	dirs := map[string]bool{}
	for _, p := range listed {
		if i := strings.IndexByte(p, '/'); i < 0 {
			f.root = append(f.root, p)
		} else if !dirs[p[:i]] {
			dirs[p[:i]] = true
			f.root = append(f.root, p[:i+1])
		}
		f.conftest = f.conftest || strings.HasSuffix(p, "/conftest.py")
		if isVendored(p) {
			continue
		}
		if _, ok := manifestNames[path.Base(p)]; ok && strings.Count(p, "/") <= 2 && !IsTestPath(p) && !IsDocPath(p) {
			f.manifests = append(f.manifests, p)
		}
		if isCIFile(p) {
			f.ciFiles = append(f.ciFiles, p)
		}
	}
	slices.Sort(f.root)
	sort.Strings(f.manifests)
	sort.Strings(f.ciFiles)
	return f
}

// detector accumulates what detect finds, deduplicating commands.
type detector struct {
	m     *Map
	facts listingFacts
	seen  map[string]bool
}

func (d *detector) read(p string) string {
	// Never through a link (a committed Makefile -> /dev/zero), never a
	// FIFO or device, never more than 1 MiB.
	data, _, skip, err := ReadRegular(nil, d.m.Root, p, 1<<20)
	if err != nil || skip != "" || binary(data) {
		return ""
	}
	return string(data)
}

// has says whether the file p, a name at the repository's root (the
// only ones detection asks about), was listed.
func (d *detector) has(p string) bool {
	_, ok := slices.BinarySearch(d.facts.root, p)
	return ok
}

func (d *detector) cmd(kind, command, source string) {
	key := kind + "\x00" + command
	if d.seen[key] || command == "" {
		return
	}
	d.seen[key] = true
	d.m.Commands = append(d.m.Commands, Command{Kind: kind, Command: command, Source: source})
}

func (d *detector) convention(note string) {
	for _, c := range d.m.Conventions {
		if c == note {
			return
		}
	}
	d.m.Conventions = append(d.m.Conventions, note)
}

// detect fills the project-level fields of m from what the listing
// showed (factsOf) and the contents of a few small files.
func detect(m *Map, facts listingFacts) {
	d := &detector{m: m, facts: facts, seen: map[string]bool{}}
	m.Manifests, m.CIFiles = facts.manifests, facts.ciFiles

	// Native commands first: they work on a fresh machine with only the
	// language toolchain, then project wrappers, then what CI runs.
	d.goCommands()
	d.nodeCommands()
	d.pythonCommands()
	d.otherCommands()
	d.makeCommands()
	for _, ci := range m.CIFiles {
		d.ciCommands(ci)
	}
	sort.SliceStable(m.Commands, func(i, j int) bool { return kindOrder(m.Commands[i].Kind) < kindOrder(m.Commands[j].Kind) })

	d.entryPoints()
	d.testLayout()
	d.conventions()
}

func kindOrder(k string) int {
	switch k {
	case "build":
		return 0
	case "lint":
		return 1
	}
	return 2
}

var goModuleLine = regexp.MustCompile(`(?m)^module\s+"?([^"\s]+)"?`)

func (d *detector) goCommands() {
	if !d.has("go.mod") {
		return
	}
	if mm := goModuleLine.FindStringSubmatch(d.read("go.mod")); mm != nil {
		d.m.GoModule = mm[1]
	}
	d.cmd("build", "go build ./...", "go.mod")
	d.cmd("lint", "go vet ./...", "go.mod")
	for _, c := range []string{".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json"} {
		if d.has(c) {
			d.cmd("lint", "golangci-lint run", c)
		}
	}
	d.cmd("test", "go test ./...", "go.mod")
}

func (d *detector) packageManager() string {
	switch {
	case d.has("pnpm-lock.yaml"):
		return "pnpm"
	case d.has("yarn.lock"):
		return "yarn"
	case d.has("bun.lockb"), d.has("bun.lock"):
		return "bun"
	}
	return "npm"
}

type packageJSON struct {
	Main    string            `json:"main"`
	Bin     json.RawMessage   `json:"bin"`
	Scripts map[string]string `json:"scripts"`
}

func (d *detector) nodeCommands() {
	if !d.has("package.json") {
		return
	}
	var pkg packageJSON
	if err := json.Unmarshal([]byte(d.read("package.json")), &pkg); err != nil {
		return
	}
	pm := d.packageManager()
	run := func(script string) string {
		if pm == "npm" {
			return "npm run " + script
		}
		return pm + " run " + script
	}
	if s, ok := pkg.Scripts["build"]; ok && s != "" {
		d.cmd("build", run("build"), "package.json")
	}
	for _, name := range []string{"lint", "typecheck", "check"} {
		if s, ok := pkg.Scripts[name]; ok && s != "" {
			d.cmd("lint", run(name), "package.json")
		}
	}
	if s, ok := pkg.Scripts["test"]; ok && !strings.Contains(s, "no test specified") {
		d.cmd("test", pm+" test", "package.json")
	}
	if pkg.Main != "" {
		d.m.EntryPoints = append(d.m.EntryPoints, path.Clean(pkg.Main)+" (package.json main)")
	}
	var bin string
	var bins map[string]string
	if json.Unmarshal(pkg.Bin, &bin) == nil && bin != "" {
		d.m.EntryPoints = append(d.m.EntryPoints, path.Clean(bin)+" (package.json bin)")
	} else if json.Unmarshal(pkg.Bin, &bins) == nil {
		names := sortedKeys(bins)
		for _, n := range names {
			d.m.EntryPoints = append(d.m.EntryPoints, fmt.Sprintf("%s (package.json bin %s)", path.Clean(bins[n]), n))
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var (
	tomlSection = regexp.MustCompile(`(?m)^\[([^\]]+)\]`)
	scriptsLine = regexp.MustCompile(`(?m)^\s*([A-Za-z0-9_.-]+)\s*=\s*["']([\w.:]+)["']`)
	consoleLine = regexp.MustCompile(`["']?\s*([A-Za-z0-9_.-]+)\s*=\s*([\w.]+:[\w.]+)`)
)

// tomlSectionBody returns the lines of a TOML table, for the few keys the
// detector needs (no TOML parser is worth a dependency here).
func tomlSectionBody(doc, name string) (string, bool) {
	locs := tomlSection.FindAllStringSubmatchIndex(doc, -1)
	for i, loc := range locs {
		if strings.TrimSpace(doc[loc[2]:loc[3]]) != name {
			continue
		}
		end := len(doc)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		return doc[loc[1]:end], true
	}
	return "", false
}

func (d *detector) pythonCommands() {
	if d.m.Languages[LangPython] == 0 {
		return
	}
	py := pythonFiles{pyproject: d.read("pyproject.toml"), setupCfg: d.read("setup.cfg"), setupPy: d.read("setup.py"), tox: d.read("tox.ini")}
	d.pythonBuildAndLint(py)
	d.pythonTestCommands(py)
	d.pythonScripts(py)
}

// pythonFiles holds the Python project files commands are read from.
type pythonFiles struct{ pyproject, setupCfg, setupPy, tox string }

func (d *detector) pythonBuildAndLint(py pythonFiles) {
	if strings.Contains(py.pyproject, "[build-system]") {
		d.cmd("build", "python -m build", "pyproject.toml")
	} else if py.setupPy != "" {
		d.cmd("build", "python setup.py build", "setup.py")
	}
	if _, ok := tomlSectionBody(py.pyproject, "tool.ruff"); ok || d.has("ruff.toml") || d.has(".ruff.toml") {
		d.cmd("lint", "ruff check .", firstOf(d, "ruff.toml", ".ruff.toml", "pyproject.toml"))
	}
	if d.has(".flake8") || strings.Contains(py.setupCfg, "[flake8]") || strings.Contains(py.tox, "[flake8]") {
		d.cmd("lint", "flake8", firstOf(d, ".flake8", "setup.cfg", "tox.ini"))
	}
	if d.has("mypy.ini") || strings.Contains(py.pyproject, "[tool.mypy]") || strings.Contains(py.setupCfg, "[mypy") {
		d.cmd("lint", "mypy .", firstOf(d, "mypy.ini", "pyproject.toml", "setup.cfg"))
	}
}

func (d *detector) pythonTestCommands(py pythonFiles) {
	switch {
	case d.usesPytest(py):
		d.cmd("test", "pytest", firstOf(d, "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "setup.py", "conftest.py", "requirements.txt"))
	case d.hasPythonTests():
		d.cmd("test", "python -m unittest discover", "test layout")
	}
	if py.tox != "" {
		d.cmd("test", "tox", "tox.ini")
	}
}

// usesPytest: a pytest configuration, a conftest.py anywhere, or pytest
// named in the project's files or requirements.
func (d *detector) usesPytest(py pythonFiles) bool {
	if d.has("pytest.ini") || d.has("conftest.py") {
		return true
	}
	all := py.pyproject + py.setupCfg + py.setupPy + py.tox + d.read("requirements.txt") + d.read("requirements-dev.txt") + d.read("requirements_dev.txt")
	if strings.Contains(all, "pytest") {
		return true
	}
	return d.facts.conftest
}

// pythonScripts records console scripts: the Python entry points users run.
func (d *detector) pythonScripts(py pythonFiles) {
	for _, section := range []string{"project.scripts", "tool.poetry.scripts"} {
		if body, ok := tomlSectionBody(py.pyproject, section); ok {
			for _, mm := range scriptsLine.FindAllStringSubmatch(body, -1) {
				d.m.EntryPoints = append(d.m.EntryPoints, fmt.Sprintf("%s (script %s)", mm[2], mm[1]))
			}
		}
	}
	for _, src := range []string{py.setupPy, py.setupCfg} {
		if i := strings.Index(src, "console_scripts"); i >= 0 {
			chunk := src[i:min(len(src), i+600)]
			for _, mm := range consoleLine.FindAllStringSubmatch(chunk, 8) {
				d.m.EntryPoints = append(d.m.EntryPoints, fmt.Sprintf("%s (script %s)", mm[2], mm[1]))
			}
		}
	}
}

func (d *detector) hasPythonTests() bool {
	files := d.m.files()
	for i := range files.len() {
		if test, _ := files.flags(i); test && files.lang(i) == LangPython {
			return true
		}
	}
	return false
}

func firstOf(d *detector, names ...string) string {
	for _, n := range names {
		if d.has(n) {
			return n
		}
	}
	return names[len(names)-1]
}

func (d *detector) otherCommands() {
	if d.has("Cargo.toml") {
		d.cmd("build", "cargo build", "Cargo.toml")
		d.cmd("lint", "cargo clippy", "Cargo.toml")
		d.cmd("test", "cargo test", "Cargo.toml")
	}
	if d.has("pom.xml") {
		d.cmd("build", "mvn -B package", "pom.xml")
		d.cmd("test", "mvn -B test", "pom.xml")
	}
	for _, g := range []string{"build.gradle", "build.gradle.kts"} {
		if d.has(g) {
			tool := "gradle"
			if d.has("gradlew") {
				tool = "./gradlew"
			}
			d.cmd("build", tool+" build", g)
			d.cmd("test", tool+" test", g)
		}
	}
	if d.has("Gemfile") {
		if d.has(".rubocop.yml") {
			d.cmd("lint", "bundle exec rubocop", ".rubocop.yml")
		}
		if d.hasDir("spec") {
			d.cmd("test", "bundle exec rspec", "Gemfile")
		} else if d.has("Rakefile") {
			d.cmd("test", "bundle exec rake test", "Rakefile")
		}
	}
	if d.has("composer.json") {
		var c struct {
			Scripts map[string]json.RawMessage `json:"scripts"`
		}
		if json.Unmarshal([]byte(d.read("composer.json")), &c) == nil {
			if _, ok := c.Scripts["test"]; ok {
				d.cmd("test", "composer test", "composer.json")
			}
		}
		if d.has("phpunit.xml") || d.has("phpunit.xml.dist") {
			d.cmd("test", "vendor/bin/phpunit", firstOf(d, "phpunit.xml", "phpunit.xml.dist"))
		}
	}
	if d.has("CMakeLists.txt") {
		d.cmd("build", "cmake -S . -B build && cmake --build build", "CMakeLists.txt")
		if strings.Contains(d.read("CMakeLists.txt"), "enable_testing") {
			d.cmd("test", "ctest --test-dir build", "CMakeLists.txt")
		}
	}
}

// hasDir says whether a file was listed under dir, a directory at the
// repository's root.
func (d *detector) hasDir(dir string) bool {
	_, ok := slices.BinarySearch(d.facts.root, dir+"/")
	return ok
}

var makeTarget = regexp.MustCompile(`(?m)^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:([^=]|$)`)

func (d *detector) makeCommands() {
	for _, mk := range []string{"Makefile", "GNUmakefile", "makefile"} {
		if !d.has(mk) {
			continue
		}
		targets := map[string]bool{}
		for _, mm := range makeTarget.FindAllStringSubmatch(d.read(mk), -1) {
			targets[mm[1]] = true
		}
		for _, t := range []string{"build", "all"} {
			if targets[t] {
				d.cmd("build", "make "+t, mk)
				break
			}
		}
		for _, t := range []string{"lint", "vet", "check-format", "fmt-check"} {
			if targets[t] {
				d.cmd("lint", "make "+t, mk)
			}
		}
		for _, t := range []string{"test", "tests", "check", "unit-test", "test-unit"} {
			if targets[t] {
				d.cmd("test", "make "+t, mk)
				break
			}
		}
		return
	}
}

// ciCommands classifies the shell lines CI runs.
func (d *detector) ciCommands(ci string) {
	text := d.read(ci)
	if text == "" || !strings.HasSuffix(ci, ".yml") && !strings.HasSuffix(ci, ".yaml") {
		return
	}
	var doc any
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return
	}
	var lines []string
	collectRuns(doc, "", &lines)
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || len(line) > 160 || strings.Contains(line, "${{") {
			continue
		}
		if kind, cmd := classifyLine(line); kind != "" {
			d.cmd(kind, cmd, ci)
		}
	}
}

// shellLines splits a script into its commands' lines, joining a line
// that ends with a backslash to the next, as the shell does.
func shellLines(script string) []string {
	var out []string
	var cur strings.Builder
	for _, l := range strings.Split(script, "\n") {
		if rest, ok := strings.CutSuffix(strings.TrimRight(l, " \t"), "\\"); ok {
			cur.WriteString(strings.TrimSpace(rest) + " ")
			continue
		}
		cur.WriteString(strings.TrimSpace(l))
		out = append(out, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		out = append(out, strings.TrimSpace(cur.String()))
	}
	return out
}

// installCmd is a command that installs tools (pip install pytest), which
// names a test runner without running it.
var installCmd = regexp.MustCompile(`^(sudo )?(pip3?|python3? -m pip|uv pip|pipx|npm|pnpm|yarn|apt(-get)?|brew|gem|go|cargo|poetry|conda|bundle) (install|ci|add)(\s|$)`)

// classifyLine classifies the commands of one shell line (a && b; c) by
// the first that tests, lints or builds. It returns the whole line, or
// only that command when the line also installs something (pip install
// pytest && pytest): an install names a test runner without running it.
func classifyLine(line string) (kind, cmd string) {
	parts := shellSeparator.Split(line, -1)
	installs := false
	for _, part := range parts {
		installs = installs || installCmd.MatchString(strings.TrimSpace(part))
	}
	for _, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" || installCmd.MatchString(part) {
			continue
		}
		if k := classifyCommand(part); k != "" {
			if installs {
				return k, part
			}
			return k, line
		}
	}
	return "", ""
}

var shellSeparator = regexp.MustCompile(`&&|\|\||;`)

// collectRuns gathers shell commands from GitHub Actions "run:" keys and
// GitLab/Travis/CircleCI "script:"-style keys.
func collectRuns(node any, key string, out *[]string) {
	switch n := node.(type) {
	case map[string]any:
		for _, k := range sortedKeys(n) {
			collectRuns(n[k], k, out)
		}
	case []any:
		for _, v := range n {
			collectRuns(v, key, out)
		}
	case string:
		switch key {
		case "run", "script", "before_script", "command", "install":
			*out = append(*out, shellLines(n)...)
		}
	}
}

var (
	testCmd  = regexp.MustCompile(`(^|\s)(go test|pytest|py\.test|npm (run )?test|yarn (run )?test|pnpm (run )?test|cargo test|cargo nextest|mvn( -B)?( \S+)* (test|verify)|gradlew? test|tox|nox|make (test|check)|ctest|bundle exec (rspec|rake)|vendor/bin/phpunit|python -m (pytest|unittest))(\s|$)`)
	lintCmd  = regexp.MustCompile(`(^|\s)(golangci-lint|go vet|staticcheck|ruff|flake8|pylint|mypy|black --check|eslint|npm run lint|yarn lint|pnpm lint|cargo clippy|cargo fmt|rubocop|make lint|pre-commit run)(\s|$)`)
	buildCmd = regexp.MustCompile(`(^|\s)(go build|cargo build|npm run build|yarn build|pnpm build|mvn( -B)? (package|install)|gradlew? build|make( build)?$|python -m build|cmake --build)(\s|$)`)
)

func classifyCommand(line string) string {
	switch {
	case testCmd.MatchString(line):
		return "test"
	case lintCmd.MatchString(line):
		return "lint"
	case buildCmd.MatchString(line):
		return "build"
	}
	return ""
}

func (d *detector) entryPoints() {
	m := d.m
	goMains := map[string]bool{}
	var pyMains []string
	files := m.files()
	for i := range files.len() {
		p, lang := files.path(i), files.lang(i)
		test, main := files.flags(i)
		if test || IsDocPath(p) {
			continue
		}
		base := path.Base(p)
		switch {
		case lang == LangGo && main:
			goMains[path.Dir(p)] = true
		case lang == LangPython && base == "__main__.py":
			m.EntryPoints = append(m.EntryPoints, p)
		case lang == LangPython && main:
			pyMains = append(pyMains, p)
		case lang == LangRust && (p == "src/main.rs" || strings.HasPrefix(p, "src/bin/") || strings.HasSuffix(p, "/src/main.rs")):
			m.EntryPoints = append(m.EntryPoints, p)
		case lang == LangJava && main:
			m.EntryPoints = append(m.EntryPoints, p)
		}
	}
	for _, dir := range sortedKeys(goMains) {
		m.EntryPoints = append(m.EntryPoints, dir+"/ (Go main package)")
	}
	// Scripts with a __main__ guard are listed only when they are few;
	// in large trees they are mostly tools and examples.
	if len(pyMains) <= 10 {
		m.EntryPoints = append(m.EntryPoints, pyMains...)
	}
}

var testDirNames = map[string]bool{"test": true, "tests": true, "testing": true, "__tests__": true, "spec": true, "specs": true}

func testPattern(p string) string {
	base := path.Base(p)
	ext := path.Ext(base)
	switch {
	case strings.HasSuffix(base, "_test.go"):
		return "*_test.go"
	case strings.HasPrefix(base, "test_") && ext == ".py":
		return "test_*.py"
	case strings.HasSuffix(base, "_test.py"):
		return "*_test.py"
	case strings.Contains(base, ".test."):
		return "*.test" + ext
	case strings.Contains(base, ".spec."):
		return "*.spec" + ext
	case strings.HasSuffix(base, "Test.java"), strings.HasSuffix(base, "Tests.java"):
		return "*Test.java"
	case strings.HasSuffix(base, "_spec.rb"):
		return "*_spec.rb"
	}
	return ""
}

func (d *detector) testLayout() {
	type group struct {
		lang, root string
		n          int
		patterns   map[string]int
	}
	groups := map[string]*group{}
	files := d.m.files()
	for i := range files.len() {
		p, lang := files.path(i), files.lang(i)
		if test, _ := files.flags(i); !test || !IsCode(lang) {
			continue
		}
		pat := testPattern(p)
		root := ""
		parts := strings.Split(p, "/")
		for i, part := range parts[:len(parts)-1] {
			if testDirNames[part] {
				root = strings.Join(parts[:i+1], "/") + "/"
				break
			}
		}
		if root == "" {
			if pat == "" {
				continue // fixtures and helpers, not tests
			}
			root = "beside the code"
		}
		k := lang + "\x00" + root
		g := groups[k]
		if g == nil {
			g = &group{lang: lang, root: root, patterns: map[string]int{}}
			groups[k] = g
		}
		g.n++
		if pat != "" {
			g.patterns[pat]++
		}
	}
	var list []*group
	for _, g := range groups {
		list = append(list, g)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].n != list[j].n {
			return list[i].n > list[j].n
		}
		return list[i].lang+list[i].root < list[j].lang+list[j].root
	})
	for i, g := range list {
		if i == 6 {
			break
		}
		pats := sortedKeys(g.patterns)
		line := fmt.Sprintf("%s: %d test files %s", g.lang, g.n, g.root)
		if g.root != "beside the code" {
			line = fmt.Sprintf("%s: %d test files under %s", g.lang, g.n, g.root)
		}
		if len(pats) > 0 {
			line += " (" + strings.Join(pats, ", ") + ")"
		}
		d.m.TestLayout = append(d.m.TestLayout, line)
	}
}

// conventionFiles maps configuration files to what they say about style.
var conventionFiles = []struct{ file, note string }{
	{".editorconfig", "editor settings in .editorconfig"},
	{".pre-commit-config.yaml", "pre-commit hooks (.pre-commit-config.yaml)"},
	{".prettierrc", "formatting with prettier (.prettierrc)"},
	{".prettierrc.json", "formatting with prettier (.prettierrc.json)"},
	{".prettierrc.js", "formatting with prettier (.prettierrc.js)"},
	{"prettier.config.js", "formatting with prettier (prettier.config.js)"},
	{".eslintrc", "linting with eslint (.eslintrc)"},
	{".eslintrc.js", "linting with eslint (.eslintrc.js)"},
	{".eslintrc.json", "linting with eslint (.eslintrc.json)"},
	{".eslintrc.yml", "linting with eslint (.eslintrc.yml)"},
	{"eslint.config.js", "linting with eslint (eslint.config.js)"},
	{"eslint.config.mjs", "linting with eslint (eslint.config.mjs)"},
	{"biome.json", "formatting and linting with biome (biome.json)"},
	{".golangci.yml", "linting with golangci-lint (.golangci.yml)"},
	{".golangci.yaml", "linting with golangci-lint (.golangci.yaml)"},
	{".flake8", "linting with flake8 (.flake8)"},
	{"ruff.toml", "linting with ruff (ruff.toml)"},
	{"mypy.ini", "type checking with mypy (mypy.ini)"},
	{".pylintrc", "linting with pylint (.pylintrc)"},
	{"pylintrc", "linting with pylint (pylintrc)"},
	{"rustfmt.toml", "formatting with rustfmt (rustfmt.toml)"},
	{".rustfmt.toml", "formatting with rustfmt (.rustfmt.toml)"},
	{"clippy.toml", "linting with clippy (clippy.toml)"},
	{".clang-format", "formatting with clang-format (.clang-format)"},
	{"checkstyle.xml", "Java style checked by checkstyle (checkstyle.xml)"},
	{".rubocop.yml", "Ruby style checked by rubocop (.rubocop.yml)"},
	{"CONTRIBUTING.md", "contribution guide in CONTRIBUTING.md"},
	{"CONTRIBUTING.rst", "contribution guide in CONTRIBUTING.rst"},
}

func (d *detector) conventions() {
	if d.m.Languages[LangGo] > 0 {
		d.convention("Go code formatted with gofmt")
	}
	for _, c := range conventionFiles {
		if d.has(c.file) {
			d.convention(c.note)
		}
	}
	pyproject := d.read("pyproject.toml")
	for _, tool := range []struct{ section, note string }{
		{"tool.black", "formatting with black (pyproject.toml)"},
		{"tool.ruff", "linting with ruff (pyproject.toml)"},
		{"tool.isort", "imports sorted with isort (pyproject.toml)"},
		{"tool.mypy", "type checking with mypy (pyproject.toml)"},
		{"tool.pytest.ini_options", "pytest configured in pyproject.toml"},
	} {
		if _, ok := tomlSectionBody(pyproject, tool.section); ok {
			d.convention(tool.note)
		}
	}
	if strings.Contains(d.read("tsconfig.json"), `"strict": true`) {
		d.convention("TypeScript strict mode (tsconfig.json)")
	}
}
