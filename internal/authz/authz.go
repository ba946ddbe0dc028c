// Package authz decides who may drive planex on a repository.
//
// Triggering and approving need write, maintain or admin access, read from
// the collaborator permission API (never from a webhook's
// author_association, which does not reflect team or organisation grants
// reliably). Bots never approve; a bot (a GitHub App's account) starts
// nothing unless the repository's workflow names it in Policy.TrustedBots
// (an App that echoes others' words would hand its write access to
// them); the Actions bot, which every workflow's job token acts as,
// does nothing whatever the policy says. A refusal carries a short
// reason meant for the person refused; failures to find out are returned
// as errors and are for the logs.
package authz

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/gh"
)

// Action is something a person asks planex to do.
type Action string

const (
	// Trigger covers planning and every command other than approve.
	Trigger Action = "trigger"
	// Approve is running an approved plan.
	Approve Action = "approve"
)

// PermissionGetter reads a user's access to a repository; *gh.Client
// implements it.
type PermissionGetter interface {
	Permission(ctx context.Context, owner, repo, login string) (gh.Permission, error)
}

// Decision is the outcome of Check.
type Decision struct {
	Allowed bool
	// Reason explains a refusal to the user (empty when allowed).
	Reason string
	// Permission and Role are what GitHub reported (empty for bots refused
	// before asking).
	Permission string
	Role       string
}

// actionsBot is the account of every workflow job's own token, among
// them jobs that a reader's issue or comment started: what it does names
// no person, so it may do nothing here, whatever GitHub reports of its
// access.
const actionsBot = "github-actions[bot]"

// writeLevels are the permission levels that may drive planex.
var writeLevels = map[string]bool{"admin": true, "write": true}

// Policy is what the repository's workflow adds to GitHub's permissions.
type Policy struct {
	// TrustedBots are the bots (GitHub Apps' "<slug>[bot]" logins) that
	// may start planex, if they have write access; no other bot may.
	TrustedBots []string
}

// trusts says whether p names login among its trusted bots.
func (p Policy) trusts(login string) bool {
	for _, b := range p.TrustedBots {
		if strings.EqualFold(b, login) {
			return true
		}
	}
	return false
}

// Check decides whether login (of type userType, as in the event
// payload) may perform action on owner/repo under pol (Policy{}: no bot
// trusted).
func (pol Policy) Check(ctx context.Context, client PermissionGetter, owner, repo, login, userType string, action Action) (Decision, error) {
	if client == nil {
		return Decision{}, errors.New("authz: no permission client")
	}
	if login == "" {
		return Decision{}, fmt.Errorf("authz: checking %s on %s/%s: the event names no user", action, owner, repo)
	}
	if action != Trigger && action != Approve {
		return Decision{}, fmt.Errorf("authz: unknown action %q", action)
	}
	if strings.EqualFold(login, actionsBot) {
		return Decision{Reason: fmt.Sprintf("@%s acts for every workflow of the repository, whoever started it, so nothing it does is a request planex takes; a maintainer has to ask.", login)}, nil
	}
	if action == Approve && event.IsBot(login, userType) {
		return Decision{Reason: fmt.Sprintf("@%s is a bot, and bots cannot approve plans; a maintainer has to approve.", login)}, nil
	}
	if event.IsBot(login, userType) && !pol.trusts(login) {
		return Decision{Reason: fmt.Sprintf("@%s is a bot that this repository's workflow does not name in trusted-bots, so nothing it does starts planex; a maintainer has to ask.", login)}, nil
	}
	p, err := client.Permission(ctx, owner, repo, login)
	if err != nil {
		return Decision{}, fmt.Errorf("authz: reading @%s's permission on %s/%s: %w", login, owner, repo, err)
	}
	d := Decision{Permission: p.Permission, Role: p.RoleName}
	// permission is the access level (maintain is reported as write,
	// triage as read, a custom role as the level it is built on); it
	// alone decides. role_name is a name: a custom role's is whatever
	// the organisation called it, "Maintain" for one built on triage
	// among them, so it is only shown to the person refused.
	if writeLevels[strings.ToLower(p.Permission)] {
		d.Allowed = true
		return d, nil
	}
	verb := map[Action]string{Trigger: "run planex", Approve: "approve plans"}[action]
	d.Reason = fmt.Sprintf("Sorry @%s, you need write, maintain or admin access to %s/%s to %s (you have %s access).", login, owner, repo, verb, d.Access())
	return d, nil
}

// Access names the access a refused user has, as in "read access": the
// role's name, unless it is none, missing or spelled like a role that
// may drive planex (a custom role's name, whatever its organisation
// called it, would make a refusal read as nonsense), then the level
// ("no" for none).
func (d Decision) Access() string {
	have := d.Role
	if r := strings.ToLower(have); have == "" || r == "none" || writeLevels[r] || r == "maintain" {
		have = d.Permission
	}
	if have == "" || strings.EqualFold(have, "none") {
		have = "no"
	}
	return have
}
