package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/slash"
)

// SettingsPath is the repository's planex configuration, read from the
// default branch only, so a pull request cannot change how planex treats
// it.
const SettingsPath = plan.SettingsFile

// Settings are the keys .github/planex.yml may set. They take precedence
// over the workflow's inputs.
type Settings struct {
	TriggerPhrase *string    `yaml:"trigger-phrase"`
	Concurrency   *int       `yaml:"concurrency"`
	MaxCostUSD    *float64   `yaml:"max-cost-usd"`
	Draft         *bool      `yaml:"draft"`
	AutoApprove   *bool      `yaml:"auto-approve"`
	BaseBranch    *string    `yaml:"base-branch"`
	MaxIssues     *int       `yaml:"max-issues"`
	Label         *string    `yaml:"label"`
	CIFix         *CIFixMode `yaml:"ci-fix"`
	CIFixAttempts *int       `yaml:"ci-fix-attempts"`
}

// SettingsError is a mistake in .github/planex.yml, with the line it is
// on (0 when unknown), so the Action can annotate that line.
type SettingsError struct {
	Line int
	Msg  string
}

func (e *SettingsError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", SettingsPath, e.Line, e.Msg)
	}
	return SettingsPath + ": " + e.Msg
}

// Location is the file and line of the mistake.
func (e *SettingsError) Location() (string, int) { return SettingsPath, e.Line }

var yamlLineRe = regexp.MustCompile(`^line (\d+): `)

// settingsError turns a YAML message ("line 3: field x not found") into a
// SettingsError on that line.
func settingsError(msg string) *SettingsError {
	msg = strings.Replace(strings.TrimPrefix(msg, "yaml: "), " in type action.Settings", "", 1)
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &SettingsError{Line: line, Msg: msg[len(m[0]):]}
	}
	return &SettingsError{Msg: msg}
}

// ParseSettings reads .github/planex.yml, naming the line of any unknown
// key or wrong value.
func ParseSettings(data []byte) (Settings, error) {
	var s Settings
	if len(bytes.TrimSpace(data)) == 0 {
		return s, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return s, decodeError(err)
	}
	if key, msg := s.problem(); key != "" {
		return s, &SettingsError{Line: keyLine(data, key), Msg: msg}
	}
	return s, nil
}

// decodeError turns the YAML decoder's error into a SettingsError on the
// line of its first mistake, listing any others.
func decodeError(err error) *SettingsError {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		first := settingsError(te.Errors[0])
		for _, m := range te.Errors[1:] {
			first.Msg += "; " + strings.Replace(m, " in type action.Settings", "", 1)
		}
		return first
	}
	return settingsError(err.Error())
}

// problem names the first key whose value is out of range and says what
// is wrong with it; key is "" when all are fine.
func (s Settings) problem() (key, msg string) {
	switch {
	case s.Concurrency != nil && (*s.Concurrency < 1 || *s.Concurrency > slash.MaxConcurrency):
		return "concurrency", fmt.Sprintf("concurrency must be between 1 and %d, got %d", slash.MaxConcurrency, *s.Concurrency)
	case s.MaxCostUSD != nil && *s.MaxCostUSD < 0:
		return "max-cost-usd", "max-cost-usd must not be negative"
	case s.TriggerPhrase != nil && !strings.HasPrefix(*s.TriggerPhrase, "/"):
		return "trigger-phrase", fmt.Sprintf("trigger-phrase must start with '/', got %q", *s.TriggerPhrase)
	case s.MaxIssues != nil && *s.MaxIssues < 1:
		return "max-issues", "max-issues must be at least 1"
	case s.CIFix != nil && *s.CIFix != CIFixPlan && *s.CIFix != CIFixAuto && *s.CIFix != CIFixOff:
		return "ci-fix", fmt.Sprintf("ci-fix must be plan, auto or off, got %q", *s.CIFix)
	case s.CIFixAttempts != nil && *s.CIFixAttempts < 1:
		return "ci-fix-attempts", "ci-fix-attempts must be at least 1"
	}
	return "", ""
}

// keyLine is the line of a top-level key in a YAML document (0 if absent).
func keyLine(data []byte, key string) int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i].Line
		}
	}
	return 0
}

// Apply overrides the configuration with the settings that are set.
func (s Settings) Apply(c *Config) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.Trigger, s.TriggerPhrase)
	set(&c.BaseBranch, s.BaseBranch)
	set(&c.Label, s.Label)
	if s.CIFix != nil {
		c.CIFix = *s.CIFix
	}
	if s.CIFixAttempts != nil {
		c.CIFixAttempts = *s.CIFixAttempts
	}
	if s.Concurrency != nil {
		c.Concurrency = *s.Concurrency
	}
	if s.MaxCostUSD != nil {
		c.MaxCostUSD = *s.MaxCostUSD
	}
	if s.Draft != nil {
		c.Draft = *s.Draft
	}
	if s.AutoApprove != nil {
		c.AutoApprove = *s.AutoApprove
	}
	if s.MaxIssues != nil {
		c.MaxIssues = *s.MaxIssues
	}
}

// repoAPI is what reading the repository's settings and base needs.
type repoAPI interface {
	DefaultBranch(ctx context.Context, owner, repo string) (string, error)
	GetFileContent(ctx context.Context, owner, repo, ref, path string) ([]byte, error)
}

// LoadSettings reads .github/planex.yml from the default branch (never a
// tag of the same name) and applies it; a missing file changes nothing.
func (r *Runner) LoadSettings(ctx context.Context) error {
	branch, err := r.flows().intake.defaultBranch(ctx)
	if err != nil {
		return err
	}
	// By the branch's full name: a short one is resolved by GitHub, and
	// git tries a tag of that name first, which whoever can push may make
	// past the branch's protection.
	data, err := r.GH.Repo.GetFileContent(ctx, r.Cfg.Owner, r.Cfg.Repo, "refs/heads/"+branch, SettingsPath)
	if gh.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", SettingsPath, err)
	}
	s, err := ParseSettings(data)
	if err != nil {
		return err
	}
	s.Apply(&r.Cfg)
	return nil
}

// defaultBranch is the repository's default branch: as the event named
// it, else as GitHub says, asked once a run.
func (r *env) defaultBranch(ctx context.Context) (string, error) {
	if r.defaultBranchName == "" {
		r.defaultBranchName = r.Cfg.DefaultBranch
	}
	if r.defaultBranchName == "" {
		b, err := r.GH.Repo.DefaultBranch(ctx, r.Cfg.Owner, r.Cfg.Repo)
		if err != nil {
			return "", fmt.Errorf("reading the default branch: %w", err)
		}
		r.defaultBranchName = b
	}
	return r.defaultBranchName, nil
}
