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

	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/repomap"
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
	// WorkDir keeps extracted base commits between runs; "" means a
	// directory under os.TempDir().
	WorkDir string
	// Logger receives progress; nil means slog.Default().
	Logger *slog.Logger
	// Out, when set, receives the results table.
	Out io.Writer
}

// Metrics are the scores of one ranker over the evaluated instances.
type Metrics struct {
	System string
	N      int
	Acc1   float64
	Acc5   float64
	MRR    float64
}

// Outcome is one instance's result for one ranker.
type Outcome struct {
	InstanceID string
	System     string
	// Rank is the 1-based position of the first gold file, 0 if not in the top k.
	Rank int
	Top  []string
}

// EvalReport is what Evaluate measured.
type EvalReport struct {
	K        int
	Metrics  []Metrics
	Outcomes []Outcome
	// Skipped lists instances that could not be evaluated, with why.
	Skipped []string
}

// Evaluate ranks every instance's repository at its base commit with the
// full ranker and the BM25 baseline and scores Acc@1, Acc@5 and MRR (over
// the top k). Repositories are read from reposDir/<owner>__<name>, which may
// be a git directory, a clone, or (without base-commit checkout) a plain tree.
func Evaluate(ctx context.Context, instances []Instance, reposDir string, k int, opts EvalOptions) (*EvalReport, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if k < 5 {
		k = 5 // Acc@5 needs at least five
	}
	work := opts.WorkDir
	if work == "" {
		work = filepath.Join(os.TempDir(), "planex-eval")
	}
	systems := []struct {
		name string
		opts Options
	}{{"planex locate", Options{Logger: log}}, {"BM25 baseline", Options{Baseline: true, Logger: log}}}
	rep := &EvalReport{K: k}
	sums := make([]Metrics, len(systems))
	for s := range systems {
		sums[s].System = systems[s].name
	}
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
		m, err := repomap.Build(ctx, tree, repomap.Options{Logger: log, CacheDir: filepath.Join(work, ".maps")})
		if err != nil {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: %v", in.InstanceID, err))
			continue
		}
		ix := NewIndex(m)
		gold := map[string]bool{}
		for _, g := range in.GoldFiles {
			gold[g] = true
		}
		for s, sys := range systems {
			ranked, err := ix.Rank(in.ProblemStatement, k, sys.opts)
			if err != nil {
				return nil, fmt.Errorf("ranking %s: %w", in.InstanceID, err)
			}
			o := Outcome{InstanceID: in.InstanceID, System: sys.name}
			for i, r := range ranked {
				o.Top = append(o.Top, r.Path)
				if o.Rank == 0 && gold[r.Path] {
					o.Rank = i + 1
				}
			}
			rep.Outcomes = append(rep.Outcomes, o)
			sums[s].N++
			if o.Rank == 1 {
				sums[s].Acc1++
			}
			if o.Rank >= 1 && o.Rank <= 5 {
				sums[s].Acc5++
			}
			if o.Rank > 0 {
				sums[s].MRR += 1 / float64(o.Rank)
			}
		}
		log.Debug("eval: ranked", "instance", in.InstanceID, "files", len(m.Entries))
	}
	for _, s := range sums {
		if s.N > 0 {
			s.Acc1 /= float64(s.N)
			s.Acc5 /= float64(s.N)
			s.MRR /= float64(s.N)
		}
		rep.Metrics = append(rep.Metrics, s)
	}
	if opts.Out != nil {
		if err := rep.WriteTable(opts.Out); err != nil {
			return nil, fmt.Errorf("writing results: %w", err)
		}
	}
	if len(rep.Metrics) > 0 && rep.Metrics[0].N == 0 {
		return rep, fmt.Errorf("evaluating: no instance could be evaluated (%d skipped)", len(rep.Skipped))
	}
	return rep, nil
}

// WriteTable prints the metrics as an aligned table, then what was skipped.
func (r *EvalReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "system\tN\tAcc@1\tAcc@5\tMRR@%d\n", r.K)
	for _, m := range r.Metrics {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\n", m.System, m.N, m.Acc1, m.Acc5, m.MRR)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Skipped {
		if _, err := fmt.Fprintf(w, "skipped %s\n", s); err != nil {
			return err
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
	list, err := gitrepo.Output(ctx, "", "--git-dir="+gitDir, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return fmt.Errorf("listing commit %s of %s: %w", commit, gitDir, err)
	}
	type entry struct{ sha, path string }
	var entries []entry
	for _, rec := range bytes.Split(list, []byte{0}) {
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 || f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
			continue // symlinks and submodules are not mapped
		}
		if rel := filepath.FromSlash(string(p)); filepath.IsLocal(rel) {
			entries = append(entries, entry{f[2], rel})
		}
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
	var werr error
	for _, e := range entries {
		header, err := r.ReadString('\n')
		if err != nil {
			werr = fmt.Errorf("reading object %s: %w", e.sha, err)
			break
		}
		f := strings.Fields(header)
		if len(f) == 2 && f[1] == "missing" {
			continue
		}
		var size int64
		if len(f) != 3 {
			werr = fmt.Errorf("unexpected cat-file header %q", header)
			break
		}
		if _, err := fmt.Sscan(f[2], &size); err != nil {
			werr = fmt.Errorf("unexpected cat-file header %q", header)
			break
		}
		if err := writeFile(filepath.Join(dest, e.path), io.LimitReader(r, size)); err != nil {
			werr = fmt.Errorf("extracting %s: %w", e.path, err)
			break
		}
		if _, err := r.Discard(1); err != nil { // trailing newline
			werr = fmt.Errorf("reading object %s: %w", e.sha, err)
			break
		}
	}
	_, _ = io.Copy(io.Discard, r)
	if err := cmd.Wait(); err != nil && werr == nil {
		werr = fmt.Errorf("reading objects of %s: %w", commit, err)
	}
	return werr
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
