package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/locate"
	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/safefile"
	"github.com/planexhq/planex/internal/termsafe"
)

// newLocateCmd ranks the repository's files for an issue text, with no model.
func newLocateCmd() *cobra.Command {
	var (
		repo      string
		top       int
		queryFile string
		explain   bool
		baseline  bool
	)
	cmd := &cobra.Command{
		Use:   "locate [-C DIR] [--top K] [--query-file FILE | QUERY...]",
		Short: "Rank the files most relevant to an issue or requirement (no model needed)",
		Long: `locate maps the repository (respecting .gitignore, skipping vendored,
generated and binary files) and prints the files most relevant to the query,
best first, one repository-relative path per line (a path holding control
characters is printed in double quotes with Go's escapes). The query is the issue
text: given as arguments, or read from --query-file ("-" for stdin).
--explain shows, under each file, the evidence that ranked it.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if queryFile != "" && len(args) > 0 {
				return usageError(cmd, "locating files: give the query either as arguments or with --query-file, not both")
			}
			if top < 1 {
				return usageError(cmd, "--top must be at least 1, got %d", top)
			}
			query, err := readQuery(cmd.InOrStdin(), queryFile, args)
			if err != nil {
				return err
			}
			if strings.TrimSpace(query) == "" {
				return usageError(cmd, "locating files: %v (pass it as arguments or with --query-file)", locate.ErrEmptyQuery)
			}
			ix, err := locate.OpenForOneQuery(cmd.Context(), repo, repomap.Options{})
			if err != nil {
				return fmt.Errorf("mapping repository %s: %w", repo, err)
			}
			defer ix.Close() // a loaded index reads its file until then
			ranked, err := ix.Rank(query, top, locate.Options{Baseline: baseline})
			if err != nil {
				return fmt.Errorf("ranking files in %s: %w", repo, err)
			}
			out := cmd.OutOrStdout()
			if len(ranked) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "no file matched the query")
				return nil
			}
			for _, r := range ranked {
				// A file name with control characters is printed quoted,
				// so the line still names the file exactly.
				if _, err := fmt.Fprintln(out, termsafe.Path(r.Path)); err != nil {
					return fmt.Errorf("writing results: %w", err)
				}
				if explain {
					fmt.Fprintf(out, "    score %.3f\n", r.Score)
					for _, why := range r.Reasons {
						// Reasons quote the repository's text (commit
						// subjects): one line each, whatever it holds.
						fmt.Fprintf(out, "    %s\n", abbrev.PlainLine(why))
					}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&repo, "repo", "C", ".", "the repository `DIR` to search")
	f.IntVarP(&top, "top", "k", 10, "how many files to print")
	f.StringVar(&queryFile, "query-file", "", `read the query from FILE ("-" for stdin)`)
	f.BoolVar(&explain, "explain", false, "show why each file ranked")
	f.BoolVar(&baseline, "baseline", false, "rank with plain BM25 over file contents (for comparison)")
	return cmd
}

func readQuery(stdin io.Reader, file string, args []string) (string, error) {
	if file != "" && len(args) > 0 {
		return "", errors.New("locating files: give the query either as arguments or with --query-file, not both")
	}
	if file == "" {
		return strings.Join(args, " "), nil
	}
	var (
		data []byte
		err  error
	)
	if file == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, 16<<20))
	} else {
		// A regular file only, of at most the query's own bound: a FIFO
		// or a link to a device a clone commits is refused at once.
		data, err = safefile.ReadRegular(file, 16<<20)
	}
	if err != nil {
		return "", fmt.Errorf("reading query file %s: %w", file, err)
	}
	return string(data), nil
}

// writeOutcomes writes rep's per-instance outcomes to file.
func writeOutcomes(file string, rep *locate.EvalReport) error {
	var b bytes.Buffer
	if err := rep.WriteOutcomes(&b); err != nil {
		return err
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing per-instance outcomes: %w", err)
	}
	return nil
}

// newEvalLocateCmd scores locate on a localisation data set (SWE-bench style
// JSON lines) against the plain BM25 baseline.
func newEvalLocateCmd() *cobra.Command {
	var (
		data, repos, workDir string
		weightsFile, fitFile string
		perInstance          string
		top                  int
		verbose, loo, inFold bool
	)
	cmd := &cobra.Command{
		Use:   "eval-locate --data FILE --repos DIR [--top K]",
		Short: "Measure locate (Acc@1, Acc@5, MRR) against a plain BM25 baseline",
		Long: `eval-locate reads instances (instance_id, repo, base_commit,
problem_statement, gold_files) as JSON lines, checks out each base commit from
DIR/<owner>__<name> (a git directory or clone; plain trees are used as they
are), ranks files with locate and with plain BM25, and prints Acc@1/3/5/10
and MRR overall and per repository. --leave-one-out adds, per repository,
the scores of weights fitted without that repository; --in-fold scores,
for each repository held out, leave-one-out among the others only (each
other instance ranked once per held-out repository, the held-out one never
used), the score to choose a change on; --fit FILE writes
weights fitted on all instances (internal/locate/weights.json is such a file);
--per-instance FILE writes each instance's rank and top files under every
system as JSON lines.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if data == "" || repos == "" {
				return usageError(cmd, "evaluating locate: --data and --repos are required")
			}
			ins, err := locate.LoadInstances(data)
			if err != nil {
				return fmt.Errorf("evaluating locate: %w", err)
			}
			out := cmd.OutOrStdout()
			opts := locate.EvalOptions{WorkDir: workDir, Out: out, LeaveOneOut: loo, InFold: inFold}
			if weightsFile != "" {
				if opts.Weights, err = locate.LoadWeights(weightsFile); err != nil {
					return fmt.Errorf("evaluating locate: %w", err)
				}
			}
			rep, err := locate.Evaluate(cmd.Context(), ins, repos, top, opts)
			if err != nil {
				return fmt.Errorf("evaluating locate on %s: %w", data, err)
			}
			if fitFile != "" {
				if err := locate.SaveWeights(fitFile, locate.Fit(rep.Samples, locate.FitOptions{})); err != nil {
					return fmt.Errorf("evaluating locate: %w", err)
				}
				fmt.Fprintf(out, "fitted weights written to %s\n", fitFile)
			}
			if perInstance != "" {
				if err := writeOutcomes(perInstance, rep); err != nil {
					return fmt.Errorf("evaluating locate: %w", err)
				}
			}
			if verbose {
				for _, o := range rep.Outcomes {
					fmt.Fprintf(out, "%s\t%s\trank %d\t%s\n", o.InstanceID, o.System, o.Rank, strings.Join(o.Top[:min(3, len(o.Top))], " "))
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "instances file (JSON lines)")
	f.StringVar(&repos, "repos", "", "directory holding <owner>__<name> repositories")
	f.IntVarP(&top, "top", "k", 10, "rank cut-off for MRR (at least 10)")
	f.StringVar(&workDir, "work-dir", "", "where to keep extracted base commits (default: planex-eval-UID in the temporary folder, which must be a private folder of yours)")
	f.BoolVarP(&verbose, "verbose", "v", false, "also print each instance's rank")
	f.BoolVar(&loo, "leave-one-out", false, "also score each repository with weights fitted on the others")
	f.BoolVar(&inFold, "in-fold", false, "also score, for each repository held out, leave-one-out among the others only (to decide a change without seeing a left-out score)")
	f.StringVar(&fitFile, "fit", "", "fit weights on all instances and write them to `FILE`")
	f.StringVar(&perInstance, "per-instance", "", "write each instance's rank and top files under every system to `FILE` (JSON lines)")
	f.StringVar(&weightsFile, "weights", "", "rank with the weights in `FILE` instead of the built-in ones")
	return cmd
}
