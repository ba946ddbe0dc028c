package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/planexhq/planex/internal/command"
	"github.com/planexhq/planex/internal/gh"
)

// SettingsPath is the repository's planex configuration, read from the
// default branch only, so a pull request cannot change how planex treats
// it.
const SettingsPath = ".github/planex.yml"

// Settings are the keys .github/planex.yml may set. They take precedence
// over the workflow's inputs.
type Settings struct {
	TriggerPhrase *string  `yaml:"trigger-phrase"`
	Concurrency   *int     `yaml:"concurrency"`
	MaxCostUSD    *float64 `yaml:"max-cost-usd"`
	Draft         *bool    `yaml:"draft"`
	AutoApprove   *bool    `yaml:"auto-approve"`
	BaseBranch    *string  `yaml:"base-branch"`
	MaxIssues     *int     `yaml:"max-issues"`
	Label         *string  `yaml:"label"`
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
		var te *yaml.TypeError
		if errors.As(err, &te) {
			msgs := make([]string, len(te.Errors))
			for i, m := range te.Errors {
				msgs[i] = strings.Replace(m, " in type action.Settings", "", 1)
			}
			return s, fmt.Errorf("%s: %s", SettingsPath, strings.Join(msgs, "; "))
		}
		return s, fmt.Errorf("%s: %s", SettingsPath, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	switch {
	case s.Concurrency != nil && (*s.Concurrency < 1 || *s.Concurrency > command.MaxConcurrency):
		return s, fmt.Errorf("%s: concurrency must be between 1 and %d, got %d", SettingsPath, command.MaxConcurrency, *s.Concurrency)
	case s.MaxCostUSD != nil && *s.MaxCostUSD < 0:
		return s, fmt.Errorf("%s: max-cost-usd must not be negative", SettingsPath)
	case s.TriggerPhrase != nil && !strings.HasPrefix(*s.TriggerPhrase, "/"):
		return s, fmt.Errorf("%s: trigger-phrase must start with '/', got %q", SettingsPath, *s.TriggerPhrase)
	case s.MaxIssues != nil && *s.MaxIssues < 1:
		return s, fmt.Errorf("%s: max-issues must be at least 1", SettingsPath)
	}
	return s, nil
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

// LoadSettings reads .github/planex.yml from the default branch and
// applies it; a missing file changes nothing.
func (r *Runner) LoadSettings(ctx context.Context) error {
	branch, err := r.GH.DefaultBranch(ctx, r.Cfg.Owner, r.Cfg.Repo)
	if err != nil {
		return fmt.Errorf("reading the default branch: %w", err)
	}
	data, err := r.GH.GetFileContent(ctx, r.Cfg.Owner, r.Cfg.Repo, branch, SettingsPath)
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
