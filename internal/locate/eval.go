package locate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/safefile"
)

// Instance is one localisation task: an issue, the repository state it was
// filed against and the files the real fix changed.
type Instance struct {
	InstanceID       string   `json:"instance_id"`
	Repo             string   `json:"repo"`
	BaseCommit       string   `json:"base_commit"`
	ProblemStatement string   `json:"problem_statement"`
	GoldFiles        []string `json:"gold_files"`
}

// LoadInstances reads a JSON-lines file of instances.
func LoadInstances(path string) ([]Instance, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening instances: %w", err)
	}
	defer f.Close()
	var out []Instance
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var in Instance
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			return nil, fmt.Errorf("reading %s line %d: %w", path, line, err)
		}
		out = append(out, in)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return out, nil
}

// EvalOptions tune Evaluate.
type EvalOptions struct {
	// WorkDir keeps extracted base commits and their indexes between
	// runs; "" means planex-eval-<uid> under os.TempDir(), which must be
	// a private folder of this user's (safefile.PrivateDir).
	WorkDir string
	// Logger receives progress; nil means slog.Default().
	Logger *slog.Logger
	// Out, when set, receives the results tables.
	Out io.Writer
	// Weights score the full ranker; nil means DefaultWeights.
	Weights *Weights
	// LeaveOneOut also scores each repository with weights fitted on the
	// other repositories' instances.
	LeaveOneOut bool
	// InFold also scores, for each repository held out, leave-one-out
	// among the others only (InFold): the score to decide a change on
	// without looking at any left-out repository.
	InFold bool
}

// Metrics are the scores of one ranker over the evaluated instances.
type Metrics struct {
	System string
	// Repo is "" for all instances together.
	Repo  string
	N     int
	Acc1  float64
	Acc3  float64
	Acc5  float64
	Acc10 float64
	MRR   float64
}

// Outcome is one instance's result for one ranker.
type Outcome struct {
	InstanceID string `json:"instance_id"`
	Repo       string `json:"repo"`
	System     string `json:"system"`
	// Rank is the 1-based position of the first gold file, 0 if not in the top k.
	Rank int      `json:"rank"`
	Top  []string `json:"top"`
}

// EvalReport is what Evaluate measured.
type EvalReport struct {
	K int
	// Metrics hold, per system, all instances then each repository.
	Metrics  []Metrics
	Outcomes []Outcome
	// Skipped lists instances that could not be evaluated, with why.
	Skipped []string
	// Samples are the full ranker's features per instance, for Fit.
	Samples []Sample
	// Cold and Cached time each instance (open the index, rank), split
	// by whether the index had to be built or was loaded.
	Cold, Cached Timing
}

// Timing is the time per instance in seconds.
type Timing struct {
	N           int
	Mean, Worst float64
}

// System names in reports.
const (
	SystemLocate   = "planex locate"
	SystemBaseline = "BM25 baseline"
	SystemLOO      = "planex locate, leave-one-repo-out"
	SystemInFold   = "planex locate, in-fold"
)

// Evaluate ranks every instance's repository at its base commit with the
// full ranker and the BM25 baseline and scores Acc@1/3/5/10 and MRR (over
// the top k), overall and per repository. Repositories are read from
// reposDir/<owner>__<name>, which may be a git directory, a clone, or
// (without base-commit checkout) a plain tree.
func Evaluate(ctx context.Context, instances []Instance, reposDir string, k int, opts EvalOptions) (*EvalReport, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if k < 10 {
		k = 10 // Acc@10 needs at least ten
	}
	work, err := evalWorkDir(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	w := opts.Weights
	if w == nil {
		w = DefaultWeights()
	}
	rep := &EvalReport{K: k}
	for _, in := range instances {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("evaluating: %w", err)
		}
		tree, err := materialise(ctx, reposDir, work, in)
		if err != nil {
			log.Warn("eval: skipping instance", "instance", in.InstanceID, "err", err)
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: %v", in.InstanceID, err))
			continue
		}
		start := time.Now()
		// One cache directory per tree: a shared one keeps only the
		// newest few maps, and every run would rebuild them all.
		cache := filepath.Join(work, ".maps", filepath.Base(tree))
		key := ""
		if tree != filepath.Join(reposDir, strings.ReplaceAll(in.Repo, "/", "__")) {
			key = treeKey(in) // extracted here, so it is exactly that commit
		}
		// The history is the mirror's, up to the instance's commit.
		hist := historySource{dir: filepath.Join(reposDir, strings.ReplaceAll(in.Repo, "/", "__")), rev: in.BaseCommit}
		ix, err := open(ctx, tree, repomap.Options{Logger: log, CacheDir: cache, Key: key}, hist, nil)
		if err != nil {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: %v", in.InstanceID, err))
			continue
		}
		if _, err := ix.Rank(in.ProblemStatement, k, Options{Logger: log, Weights: w}); err != nil {
			return nil, fmt.Errorf("ranking %s: %w", in.InstanceID, err)
		}
		secs := time.Since(start).Seconds()
		t := &rep.Cold
		if ix.fromCache {
			t = &rep.Cached
		}
		t.N++
		t.Mean += secs
		t.Worst = max(t.Worst, secs)
		smp := ix.sample(in)
		rep.Samples = append(rep.Samples, smp)
		rep.Outcomes = append(rep.Outcomes, smp.outcome(w, k, SystemLocate))
		base, err := ix.Rank(in.ProblemStatement, k, Options{Baseline: true, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("ranking %s: %w", in.InstanceID, err)
		}
		rep.Outcomes = append(rep.Outcomes, outcomeOf(in, SystemBaseline, pathsOf(base)))
		if err := ix.Close(); err != nil {
			return nil, fmt.Errorf("ranking %s: %w", in.InstanceID, err)
		}
		log.Debug("eval: ranked", "instance", in.InstanceID, "files", ix.NumFiles(), "seconds", secs)
	}
	for _, t := range []*Timing{&rep.Cold, &rep.Cached} {
		if t.N > 0 {
			t.Mean /= float64(t.N)
		}
	}
	rep.Outcomes = append(rep.Outcomes, refitted(rep.Samples, k, opts)...)
	rep.Metrics = Score(rep.Outcomes)
	if opts.Out != nil {
		if err := rep.WriteTable(opts.Out); err != nil {
			return nil, fmt.Errorf("writing results: %w", err)
		}
	}
	if len(rep.Samples) == 0 {
		return rep, fmt.Errorf("evaluating: no instance could be evaluated (%d skipped)", len(rep.Skipped))
	}
	return rep, nil
}

// refitted scores the samples with weights refitted without some of
// them, as opts asks: leave-one-repository-out, then in-fold.
func refitted(samples []Sample, k int, opts EvalOptions) []Outcome {
	var out []Outcome
	if opts.LeaveOneOut {
		out = append(out, LeaveOneRepoOut(samples, k, FitOptions{})...)
	}
	if opts.InFold {
		out = append(out, InFold(samples, k, FitOptions{})...)
	}
	return out
}

func pathsOf(rs []Ranked) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Path)
	}
	return out
}

func outcomeOf(in Instance, system string, top []string) Outcome {
	o := Outcome{InstanceID: in.InstanceID, Repo: in.Repo, System: system, Top: top}
	for i, p := range top {
		for _, g := range in.GoldFiles {
			if p == g {
				o.Rank = i + 1
				return o
			}
		}
	}
	return o
}

// Score aggregates outcomes per system, overall then per repository, in
// the order systems and repositories first appear.
func Score(outcomes []Outcome) []Metrics {
	var order []string
	acc := map[[2]string]*Metrics{}
	get := func(sys, repo string) *Metrics {
		key := [2]string{sys, repo}
		m := acc[key]
		if m == nil {
			m = &Metrics{System: sys, Repo: repo}
			acc[key] = m
		}
		return m
	}
	seen := map[string]bool{}
	repoSeen := map[string]bool{}
	var repos []string
	for _, o := range outcomes {
		if !seen[o.System] {
			seen[o.System] = true
			order = append(order, o.System)
		}
		if !repoSeen[o.Repo] {
			repoSeen[o.Repo] = true
			repos = append(repos, o.Repo)
		}
		for _, m := range []*Metrics{get(o.System, ""), get(o.System, o.Repo)} {
			m.N++
			r := o.Rank
			if r == 1 {
				m.Acc1++
			}
			if r >= 1 && r <= 3 {
				m.Acc3++
			}
			if r >= 1 && r <= 5 {
				m.Acc5++
			}
			if r >= 1 && r <= 10 {
				m.Acc10++
			}
			if r > 0 {
				m.MRR += 1 / float64(r)
			}
		}
	}
	var out []Metrics
	for _, sys := range order {
		for _, repo := range append([]string{""}, repos...) {
			m, ok := acc[[2]string{sys, repo}]
			if !ok {
				continue
			}
			if n := float64(m.N); n > 0 {
				m.Acc1 /= n
				m.Acc3 /= n
				m.Acc5 /= n
				m.Acc10 /= n
				m.MRR /= n
			}
			out = append(out, *m)
		}
	}
	return out
}

// WriteTable prints the metrics as an aligned table, then what was skipped.
func (r *EvalReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "system\trepository\tN\tAcc@1\tAcc@3\tAcc@5\tAcc@10\tMRR@%d\n", r.K)
	for _, m := range r.Metrics {
		repo := m.Repo
		if repo == "" {
			repo = "(all)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", m.System, repo, m.N, m.Acc1, m.Acc3, m.Acc5, m.Acc10, m.MRR)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range []struct {
		what string
		t    Timing
	}{{"map and index built", r.Cold}, {"index loaded from cache", r.Cached}} {
		if t.t.N == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "seconds per instance, %s (%d): mean %.3f, worst %.3f\n", t.what, t.t.N, t.t.Mean, t.t.Worst); err != nil {
			return err
		}
	}
	for _, s := range r.Skipped {
		if _, err := fmt.Fprintf(w, "skipped %s\n", s); err != nil {
			return err
		}
	}
	return nil
}

// WriteOutcomes writes every instance's outcome under every system as
// JSON lines (instance_id, repo, system, rank, top), in the order they
// were measured, so two runs can be compared instance by instance.
func (r *EvalReport) WriteOutcomes(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, o := range r.Outcomes {
		if o.Top == nil {
			o.Top = []string{}
		}
		if err := enc.Encode(o); err != nil {
			return fmt.Errorf("writing the outcome of %s: %w", o.InstanceID, err)
		}
	}
	return nil
}

// materialise returns a directory holding the repository at the instance's
// base commit, extracting it once into work and reusing it afterwards.
func materialise(ctx context.Context, reposDir, work string, in Instance) (string, error) {
	name := strings.ReplaceAll(in.Repo, "/", "__")
	src := filepath.Join(reposDir, name)
	st, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("repository %s not found in %s: %w", in.Repo, reposDir, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("repository %s: %s is not a directory", in.Repo, src)
	}
	gitDir := ""
	switch {
	case isGitDir(src):
		gitDir = src
	case isGitDir(filepath.Join(src, ".git")):
		gitDir = filepath.Join(src, ".git")
	default:
		// A plain tree: assume it is already at the right commit.
		return src, nil
	}
	commit := in.BaseCommit
	if commit == "" {
		commit = "HEAD"
	}
	dest := filepath.Join(work, name+"@"+safeName(commit))
	// The marker sits beside the tree so it is not mapped as a file.
	marker := dest + ".done"
	if _, err := os.Stat(marker); err == nil {
		return dest, nil
	}
	if err := os.RemoveAll(dest); err != nil {
		return "", fmt.Errorf("clearing %s: %w", dest, err)
	}
	if err := extractCommit(ctx, gitDir, commit, dest); err != nil {
		return "", err
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		return "", fmt.Errorf("marking %s: %w", dest, err)
	}
	return dest, nil
}

// evalWorkDir is the folder extracted trees go to: the one asked for, or
// a private folder of this user's in the shared temporary folder. A fixed
// name there could be another user's folder or link, whose trees (and
// .done markers) would be ranked as the repositories' and below which
// planex removes and writes.
func evalWorkDir(asked string) (string, error) {
	if asked != "" {
		return asked, nil
	}
	work := filepath.Join(os.TempDir(), fmt.Sprintf("planex-eval-%d", os.Getuid()))
	if err := safefile.PrivateDir(work); err != nil {
		return "", fmt.Errorf("choosing the evaluation's work folder: %w", err)
	}
	return work, nil
}

// treeKey names an extracted base commit's tree state for the index cache:
// the tree never changes once extracted, so the commit is enough.
func treeKey(in Instance) string {
	if in.BaseCommit == "" {
		return ""
	}
	return "commit-" + safeName(in.BaseCommit)
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' {
			return '_'
		}
		return r
	}, s)
}

func isGitDir(p string) bool {
	for _, part := range []string{"HEAD", "objects"} {
		if _, err := os.Stat(filepath.Join(p, part)); err != nil {
			return false
		}
	}
	return true
}

// extractCommit writes the regular files of commit into dest, reading
// objects with git plumbing so that no work tree or git metadata is created
// in the source. Blobs absent from a partial clone or snapshot (usually
// large binaries) are skipped rather than failing the whole tree.
func extractCommit(ctx context.Context, gitDir, commit, dest string) error {
	entries, err := commitBlobs(ctx, gitDir, commit)
	if err != nil {
		return err
	}
	cmd, err := gitrepo.Command(ctx, "", "--git-dir="+gitDir, "cat-file", "--batch")
	if err != nil {
		return fmt.Errorf("reading objects: %w", err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("reading objects: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("reading objects: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("reading objects: %w", err)
	}
	go func() {
		w := bufio.NewWriter(stdin)
		for _, e := range entries {
			fmt.Fprintln(w, e.sha)
		}
		w.Flush()
		stdin.Close()
	}()
	r := bufio.NewReaderSize(stdout, 1<<16)
	werr := writeBlobs(r, entries, dest)
	_, _ = io.Copy(io.Discard, r)
	if err := cmd.Wait(); err != nil && werr == nil {
		werr = fmt.Errorf("reading objects of %s: %w", commit, err)
	}
	return werr
}

// blobEntry is a regular file of a commit: its blob and local path.
type blobEntry struct{ sha, path string }

// commitBlobs lists a commit's regular files; symlinks and submodules
// are not mapped, and a path that would leave dest is dropped.
func commitBlobs(ctx context.Context, gitDir, commit string) ([]blobEntry, error) {
	list, err := gitrepo.Output(ctx, "", "--git-dir="+gitDir, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return nil, fmt.Errorf("listing commit %s of %s: %w", commit, gitDir, err)
	}
	var entries []blobEntry
	for _, rec := range bytes.Split(list, []byte{0}) {
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 || f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
			continue
		}
		if rel := filepath.FromSlash(string(p)); filepath.IsLocal(rel) {
			entries = append(entries, blobEntry{f[2], rel})
		}
	}
	return entries, nil
}

// writeBlobs writes each entry's content from cat-file --batch output
// under dest, in order; a missing object is skipped.
func writeBlobs(r *bufio.Reader, entries []blobEntry, dest string) error {
	for _, e := range entries {
		header, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("reading object %s: %w", e.sha, err)
		}
		f := strings.Fields(header)
		if len(f) == 2 && f[1] == "missing" {
			continue
		}
		var size int64
		if len(f) != 3 {
			return fmt.Errorf("unexpected cat-file header %q", header)
		}
		if _, err := fmt.Sscan(f[2], &size); err != nil {
			return fmt.Errorf("unexpected cat-file header %q", header)
		}
		if err := writeFile(filepath.Join(dest, e.path), io.LimitReader(r, size)); err != nil {
			return fmt.Errorf("extracting %s: %w", e.path, err)
		}
		if _, err := r.Discard(1); err != nil { // trailing newline
			return fmt.Errorf("reading object %s: %w", e.sha, err)
		}
	}
	return nil
}

func writeFile(p string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
