package cilog

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// A failing step's command is read from the workflow file, never from its
// log: code under test prints what it likes, "##[group]Run rm -rf ~"
// included. StepCommand matches the jobs API's job and step names to the
// workflow file (as of the tested commit) and returns the step's `run`
// script when that is one plain line.

// MaxWorkflowBytes bounds the workflow file StepCommand reads.
const MaxWorkflowBytes = 512 << 10

// ErrNoCommand means the workflow file names no single plain command for
// the failed step; the fix then gets no directive from CI at all.
var ErrNoCommand = errors.New("the workflow file names no single plain command for the failed step")

type workflowFile struct {
	Defaults defaultsDef       `yaml:"defaults"`
	Jobs     map[string]jobDef `yaml:"jobs"`
}

type defaultsDef struct {
	Run struct {
		WorkingDirectory string `yaml:"working-directory"`
		Shell            string `yaml:"shell"`
	} `yaml:"run"`
}

type jobDef struct {
	Name     string      `yaml:"name"`
	Uses     string      `yaml:"uses"` // a called (reusable) workflow
	Defaults defaultsDef `yaml:"defaults"`
	Steps    []stepDef   `yaml:"steps"`
}

type stepDef struct {
	Name             string `yaml:"name"`
	Run              string `yaml:"run"`
	Uses             string `yaml:"uses"`
	WorkingDirectory string `yaml:"working-directory"`
	Shell            string `yaml:"shell"`
}

var (
	exprRe     = regexp.MustCompile(`\$\{\{.*?\}\}`)
	plainDirRe = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)
)

// StepCommand returns the command of the step named step in the job named
// job (both as the jobs API reports them) of the workflow file src. It
// returns ErrNoCommand when no single step matches, when the step runs an
// action rather than a script, or when its script is not one plain line
// without expressions (`${{ … }}` only expands on GitHub), a custom shell
// or an unusual working directory.
func StepCommand(src []byte, job, step string) (string, error) {
	if len(src) > MaxWorkflowBytes {
		return "", fmt.Errorf("the workflow file is larger than %d bytes: %w", MaxWorkflowBytes, ErrNoCommand)
	}
	var wf workflowFile
	if err := yaml.Unmarshal(src, &wf); err != nil {
		return "", fmt.Errorf("reading the workflow file: %v: %w", err, ErrNoCommand)
	}
	j, ok := matchJob(wf.Jobs, job)
	if !ok {
		return "", fmt.Errorf("no job or more than one matches %q: %w", job, ErrNoCommand)
	}
	var found *stepDef
	for i := range j.Steps {
		if stepMatches(j.Steps[i], step) {
			if found != nil {
				return "", fmt.Errorf("more than one step of job %q matches %q: %w", job, step, ErrNoCommand)
			}
			found = &j.Steps[i]
		}
	}
	if found == nil || found.Uses != "" {
		return "", fmt.Errorf("no step of job %q runs a script named %q: %w", job, step, ErrNoCommand)
	}
	return plainCommand(*found, first(found.WorkingDirectory, j.Defaults.Run.WorkingDirectory, wf.Defaults.Run.WorkingDirectory),
		first(found.Shell, j.Defaults.Run.Shell, wf.Defaults.Run.Shell))
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// plainCommand is a step's script as one command, or ErrNoCommand.
func plainCommand(s stepDef, dir, shell string) (string, error) {
	run := strings.TrimSpace(s.Run)
	switch {
	case run == "" || strings.ContainsAny(run, "\n\r`\x00") || len(run) > 200:
		return "", fmt.Errorf("the step's script is not one plain line: %w", ErrNoCommand)
	case strings.Contains(run, "${{"):
		return "", fmt.Errorf("the step's script uses an expression: %w", ErrNoCommand)
	case shell != "" && shell != "bash" && shell != "sh":
		return "", fmt.Errorf("the step runs under shell %q: %w", shell, ErrNoCommand)
	}
	if dir == "" || dir == "." {
		return run, nil
	}
	if !plainDirRe.MatchString(dir) || strings.HasPrefix(dir, "/") || strings.Contains(dir, "..") {
		return "", fmt.Errorf("the step's working directory %q is not a plain relative path: %w", dir, ErrNoCommand)
	}
	return "cd " + dir + " && " + run, nil
}

// matchJob finds the one job the API's name stands for: its id or name,
// a matrix job's "<name> (<values>)", or a name with expressions. A job
// that calls a reusable workflow stands for "<its name> / <a job there>":
// its steps are in another file, so a match there gives no command.
func matchJob(jobs map[string]jobDef, api string) (jobDef, bool) {
	var hit jobDef
	n := 0
	for id, j := range jobs {
		if nameMatches(j.Name, id, api) || (j.Uses != "" && exprMatches(first(j.Name, id)+" / ${{ called }}", api)) {
			hit = j
			n++
		}
	}
	return hit, n == 1
}

func nameMatches(name, id, api string) bool {
	label := first(name, id)
	if label == api || strings.HasPrefix(api, label+" (") && strings.HasSuffix(api, ")") {
		return true
	}
	return exprMatches(label, api)
}

// exprMatches reports whether api is label with each ${{ … }} expanded
// to some text.
func exprMatches(label, api string) bool {
	if !strings.Contains(label, "${{") {
		return false
	}
	parts := exprRe.Split(label, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re, err := regexp.Compile("^" + strings.Join(parts, ".+?") + "$")
	return err == nil && re.MatchString(api)
}

// stepMatches reports whether the API's step name is s's: its name, or
// GitHub's "Run <script's first line>" for an unnamed script step.
func stepMatches(s stepDef, api string) bool {
	if s.Name != "" {
		return s.Name == api || exprMatches(s.Name, api)
	}
	if s.Uses != "" {
		return "Run "+s.Uses == api
	}
	line, _, _ := strings.Cut(strings.TrimSpace(s.Run), "\n")
	return line != "" && "Run "+line == api
}
