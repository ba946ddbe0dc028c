package action

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/google/go-github/v60/github"
)

// ActionsBot is the account the workflow's own GITHUB_TOKEN acts as.
const ActionsBot = "github-actions[bot]"

// identity is the account planex's token acts as: planex takes a comment,
// review, issue or pull request as its own only when that account wrote
// it, never because some bot did (any GitHub App, a contributor's among
// them, posts as a bot). Pinned is the login the configuration names
// (the bot-login input, or ActionsBot for the job token); without one,
// the login is learned from what GitHub answered when planex posted in
// this job, or from the thread's record, which keeps it.
type identity struct {
	pinned  string
	mu      sync.Mutex
	learned string
	// recorded: learned from a thread's record, which whoever can push
	// writes, not from what GitHub answered to planex's own posts.
	recorded bool
}

// newIdentity is the identity cfg pins: the bot-login input, or the
// Actions bot for the job's own token.
func newIdentity(cfg *Config) *identity {
	id := &identity{pinned: strings.TrimSpace(cfg.BotLogin)}
	if id.pinned == "" && cfg.DefaultToken {
		id.pinned = ActionsBot
	}
	return id
}

// login is the account planex acts as, or "" when it is not known yet.
func (id *identity) login() string {
	if id.pinned != "" {
		return id.pinned
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.learned
}

// is says whether u is planex's own account. An unknown identity is
// nobody's.
func (id *identity) is(u *github.User) bool {
	return u != nil && id.isLogin(u.GetLogin())
}

// isLogin is is for a login alone.
func (id *identity) isLogin(login string) bool {
	self := id.login()
	return self != "" && strings.EqualFold(login, self)
}

// note learns the login from something planex itself just created (the
// user GitHub's answer names).
func (id *identity) note(u *github.User) {
	if id.pinned == "" && u.GetLogin() != "" {
		id.mu.Lock()
		defer id.mu.Unlock()
		id.learned, id.recorded = u.GetLogin(), false
	}
}

// vouched says whether login is planex's own by the configuration or by
// GitHub's answers to planex's posts in this job: an account a record
// names may be a forger's, and what planex does in its own name (a CI
// fix of its own push, which no permission check covers) needs better.
func (id *identity) vouched(login string) bool {
	if !id.isLogin(login) {
		return false
	}
	if id.pinned != "" {
		return true
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	return !id.recorded
}

// learnSelf learns planex's account, when it is not known yet, from the
// record of the issue a planex branch (head, "planex/<issue>-…") was made
// for: a pull request's flows (a follow-up, a CI fix, /planex fix) may
// run before its own thread has a record. A branch of another name, or
// an issue without a readable record of its own thread (recordOfThread),
// teaches nothing (and planex then takes no pull request for its own).
func (r *stateStore) learnSelf(ctx context.Context, head string) {
	m := runBranchRe.FindStringSubmatch(head)
	if r.self.login() != "" || m == nil {
		return
	}
	issue, err := strconv.Atoi(m[1])
	if err != nil {
		return
	}
	// A record stored under another thread's ref (a copy, a forgery) is
	// not that issue's and teaches nothing, as loadRecord refuses it.
	rec, found, err := r.fetchRecord(ctx, issue)
	if err != nil || !found {
		r.Log.Warn("learning planex's account from the issue's record", "issue", issue, "found", found, "err", err)
		return
	}
	r.self.fromRecord(rec)
}

// loginRe is a GitHub login: a user's, or an App's slug and "[bot]".
var loginRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$`)

// IsLogin reports whether s has the form of a GitHub account's login: a
// user's or organisation's name, or an App's slug followed by "[bot]".
func IsLogin(s string) bool { return loginRe.MatchString(s) }

// fromRecord learns the login a thread's record keeps, when neither the
// configuration nor this job named one (a record's text that is no login
// is not taken).
func (id *identity) fromRecord(rec *Record) {
	if id.login() == "" && rec != nil && loginRe.MatchString(rec.Self) {
		id.mu.Lock()
		defer id.mu.Unlock()
		id.learned, id.recorded = rec.Self, true
	}
}
