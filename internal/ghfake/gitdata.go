package ghfake

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/planexhq/planex/internal/gitrepo"
)

// The Git Data API (blobs, trees, commits, refs) is backed by a real bare
// repository, given with SetGitDir: objects the API creates are written
// into it with git plumbing, so a test can fetch what was made through the
// API, and refs moved through the API are what `git ls-remote` shows.

// MaxBlobSize is the largest blob GitHub accepts (100 MB).
const MaxBlobSize = 100 << 20

// apiRefLog is the reflog message of a ref moved through the API; pushes
// leave git's own ("push").
const apiRefLog = "ghfake: git data api"

// CommitVerification is what GitHub says of a commit's signature.
type CommitVerification struct {
	Verified bool
	Reason   string // "valid", "unsigned", "invalid", …
}

// SetGitDir backs the repository's Git Data API with the bare repository
// at dir (usually the tests' "origin"). Ref updates there are logged, so
// RefLog tells API updates from pushes.
func (f *Fake) SetGitDir(fullName, dir string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	if _, err := fakeGit(context.Background(), dir, nil, nil, "config", "core.logAllRefUpdates", "always"); err != nil {
		f.t.Fatalf("ghfake: SetGitDir(%q): %v", dir, err)
	}
	r.gitDir = dir
	r.verified = map[string]CommitVerification{}
}

// Verification returns what GitHub would say of commit sha's signature:
// verified only for commits made through the API without an author,
// committer or signature (GitHub signs those itself).
func (f *Fake) Verification(fullName, sha string) CommitVerification {
	f.mu.Lock()
	defer f.mu.Unlock()
	return verificationOf(f.mustRepo(fullName), sha)
}

func verificationOf(r *repoState, sha string) CommitVerification {
	if v, ok := r.verified[sha]; ok {
		return v
	}
	return CommitVerification{Reason: "unsigned"}
}

// RefUpdate is one entry of a ref's log in the backing repository.
type RefUpdate struct {
	Old, New string
	// API is true for updates made through the Git Data API, false for
	// pushes (and anything else).
	API     bool
	Message string
}

// RefLog lists the updates of ref (e.g. "refs/heads/main") in the backing
// repository, oldest first.
func (f *Fake) RefLog(fullName, ref string) []RefUpdate {
	f.mu.Lock()
	dir := f.mustRepo(fullName).gitDir
	f.mu.Unlock()
	b, err := os.ReadFile(filepath.Join(dir, "logs", filepath.FromSlash(ref)))
	if err != nil {
		return nil
	}
	var out []RefUpdate
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		head, msg, _ := strings.Cut(line, "\t")
		fields := strings.Fields(head)
		if len(fields) < 2 {
			continue
		}
		out = append(out, RefUpdate{Old: fields[0], New: fields[1], API: msg == apiRefLog, Message: msg})
	}
	return out
}

// fakeGit runs git (with planex's protections) in the bare repository dir.
func fakeGit(ctx context.Context, dir string, env []string, stdin []byte, args ...string) (string, error) {
	// Paths from requests are never patterns.
	cmd, err := gitrepo.Command(ctx, "", append([]string{"--git-dir=" + dir, "--literal-pathspecs"}, args...)...)
	if err != nil {
		return "", err
	}
	cmd.Env = append(cmd.Env, env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// gitDirOf finds what the Git Data handlers act on: the repository's
// backing git directory.
func gitDirOf(f *Fake, _ *call, r *repoState) (string, *apiError) {
	if r.gitDir == "" {
		msg := r.fullName() + ": the Git Data API needs a backing repository (ghfake.SetGitDir)"
		f.errs = append(f.errs, msg)
		f.report(msg)
		return "", errNotFound()
	}
	return r.gitDir, nil
}

// objectType is git's type of sha in dir ("" when it does not exist).
func objectType(ctx context.Context, dir, sha string) string {
	if !isSHA(sha) {
		return ""
	}
	out, err := fakeGit(ctx, dir, nil, nil, "cat-file", "-t", sha)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

func isSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

func (c *call) gitURL(r *repoState, kind, sha string) string {
	return c.apiBase + "repos/" + r.fullName() + "/git/" + kind + "/" + sha
}

func createBlob(f *Fake, c *call, r *repoState, dir string) *apiError {
	var in struct {
		Content  string `json:"content"`
		Encoding string `json:"encoding"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	var data []byte
	switch in.Encoding {
	case "", "utf-8":
		if !utf8.ValidString(in.Content) {
			return errValidation("content is not valid UTF-8")
		}
		data = []byte(in.Content)
	case "base64":
		var err error
		if data, err = base64.StdEncoding.DecodeString(in.Content); err != nil {
			return errValidation("content is not valid Base64")
		}
	default:
		return errValidation(fmt.Sprintf("encoding %q is not supported: use utf-8 or base64", in.Encoding))
	}
	if len(data) > MaxBlobSize {
		return errValidation("content is too large: blobs are limited to 100 MB")
	}
	out, err := fakeGit(c.r.Context(), dir, nil, data, "hash-object", "-w", "--stdin")
	if err != nil {
		return errStatus(http.StatusInternalServerError, err.Error())
	}
	sha := strings.TrimSpace(out)
	c.json(http.StatusCreated, map[string]any{"sha": sha, "url": c.gitURL(r, "blobs", sha)})
	return nil
}

// treeEntry is one entry of a POST .../git/trees request. Deleted is an
// explicit "sha": null, which differs from an absent sha.
type treeEntry struct {
	Path    string  `json:"path"`
	Mode    string  `json:"mode"`
	Type    string  `json:"type"`
	Sha     *string `json:"sha"`
	Content *string `json:"content"`
	Deleted bool    `json:"-"`
}

func (e *treeEntry) UnmarshalJSON(b []byte) error {
	type plain treeEntry
	if err := json.Unmarshal(b, (*plain)(e)); err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if v, ok := raw["sha"]; ok && string(bytes.TrimSpace(v)) == "null" {
		e.Deleted = true
	}
	return nil
}

func createTree(f *Fake, c *call, r *repoState, dir string) *apiError {
	var in struct {
		BaseTree string      `json:"base_tree"`
		Tree     []treeEntry `json:"tree"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	tmp, err := os.MkdirTemp("", "ghfake-index-")
	if err != nil {
		return errStatus(http.StatusInternalServerError, err.Error())
	}
	defer os.RemoveAll(tmp)
	ix := &scratchIndex{ctx: c.r.Context(), dir: dir, env: []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}}
	if in.BaseTree != "" {
		if objectType(ix.ctx, dir, in.BaseTree) != "tree" {
			return errValidation("Invalid tree info", map[string]any{"resource": "Tree", "field": "base_tree", "code": "invalid"})
		}
		if e := ix.git(nil, "read-tree", in.BaseTree); e != nil {
			return e
		}
	}
	for i, ent := range in.Tree {
		if e := ix.apply(fmt.Sprintf("tree.%d", i), ent); e != nil {
			return e
		}
	}
	out, err := fakeGit(ix.ctx, dir, ix.env, nil, "write-tree")
	if err != nil {
		return errStatus(http.StatusInternalServerError, err.Error())
	}
	sha := strings.TrimSpace(out)
	entries, err := treeEntries(ix.ctx, dir, sha)
	if err != nil {
		return errStatus(http.StatusInternalServerError, err.Error())
	}
	for _, ent := range entries {
		ent["url"] = c.gitURL(r, ent["type"].(string)+"s", ent["sha"].(string))
	}
	c.json(http.StatusCreated, map[string]any{"sha": sha, "url": c.gitURL(r, "trees", sha), "tree": entries, "truncated": false})
	return nil
}

// scratchIndex is the temporary git index a tree is built in, so the
// repository's own index is never touched.
type scratchIndex struct {
	ctx context.Context
	dir string
	env []string
}

// git runs git against the scratch index; a failure is the fake's own (500).
func (ix *scratchIndex) git(stdin []byte, args ...string) *apiError {
	if _, err := fakeGit(ix.ctx, ix.dir, ix.env, stdin, args...); err != nil {
		return errStatus(http.StatusInternalServerError, err.Error())
	}
	return nil
}

// modeType is the object type a tree-entry mode GitHub accepts goes with,
// or "" for a mode it does not accept.
func modeType(mode string) string {
	switch mode {
	case "100644", "100755", "120000":
		return "blob"
	case "160000":
		return "commit"
	case "040000":
		return "tree"
	}
	return ""
}

// validTreePath reports whether p (already trimmed of slashes) names a
// path inside the tree: not empty, no "." or ".." parts, no empty parts.
func validTreePath(p string) bool {
	return p != "" && !strings.Contains("/"+p+"/", "/../") && !strings.Contains("/"+p+"/", "/./") && !strings.Contains(p, "//")
}

// apply puts one entry of a create-tree request into the index: whatever
// was at its path goes first, then the new object (unless it is a deletion).
func (ix *scratchIndex) apply(where string, ent treeEntry) *apiError {
	p := strings.Trim(ent.Path, "/")
	if !validTreePath(p) {
		return errValidation(where + ".path is invalid")
	}
	if e := ix.remove(p); e != nil {
		return e
	}
	if ent.Deleted {
		return nil
	}
	wantType := modeType(ent.Mode)
	if wantType == "" || (ent.Type != "" && ent.Type != wantType) {
		return errValidation(fmt.Sprintf("%s: mode %q and type %q do not go together", where, ent.Mode, ent.Type))
	}
	sha, e := ix.entryObject(where, ent, wantType)
	if e != nil {
		return e
	}
	if wantType == "tree" {
		return ix.git(nil, "read-tree", "--prefix="+p+"/", sha)
	}
	info := fmt.Sprintf("%s %s\t%s\x00", ent.Mode, sha, p)
	return ix.git([]byte(info), "update-index", "--add", "-z", "--index-info")
}

// remove drops whatever the index holds at p (a file, or a directory).
func (ix *scratchIndex) remove(p string) *apiError {
	out, err := fakeGit(ix.ctx, ix.dir, ix.env, nil, "ls-files", "-z", "--", p)
	if err != nil || out == "" {
		return nil
	}
	var gone strings.Builder
	for _, q := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
		fmt.Fprintf(&gone, "0 %s\t%s\x00", strings.Repeat("0", 40), q)
	}
	return ix.git([]byte(gone.String()), "update-index", "-z", "--index-info")
}

// entryObject returns the object an entry points at: its sha, checked to
// exist with the right type, or a blob written from its content.
func (ix *scratchIndex) entryObject(where string, ent treeEntry, wantType string) (string, *apiError) {
	var sha string
	if ent.Sha != nil {
		sha = *ent.Sha
	}
	switch {
	case ent.Content != nil && sha != "":
		return "", errValidation(where + ": give either sha or content, not both")
	case ent.Content != nil:
		if wantType != "blob" {
			return "", errValidation(where + ": content is only for blobs")
		}
		out, err := fakeGit(ix.ctx, ix.dir, nil, []byte(*ent.Content), "hash-object", "-w", "--stdin")
		if err != nil {
			return "", errStatus(http.StatusInternalServerError, err.Error())
		}
		return strings.TrimSpace(out), nil
	case sha == "":
		return "", errValidation(where + ": sha or content is required")
	case wantType != "commit" && objectType(ix.ctx, ix.dir, sha) != wantType:
		// Submodule commits live elsewhere; everything else must exist.
		return "", errValidation(fmt.Sprintf("%s.sha %s is not a valid %s", where, sha, wantType))
	}
	return sha, nil
}

// treeEntries lists a tree's top-level entries as GitHub shows them.
func treeEntries(ctx context.Context, dir, tree string) ([]map[string]any, error) {
	out, err := fakeGit(ctx, dir, nil, nil, "ls-tree", "-z", "--long", tree)
	if err != nil {
		return nil, err
	}
	entries := []map[string]any{}
	for _, rec := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
		meta, name, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) < 4 {
			continue
		}
		ent := map[string]any{"path": name, "mode": f[0], "type": f[1], "sha": f[2]}
		if n, err := strconv.Atoi(f[3]); err == nil {
			ent["size"] = n
		}
		entries = append(entries, ent)
	}
	return entries, nil
}

type gitPerson struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Date  string `json:"date"`
}

func createGitCommit(f *Fake, c *call, r *repoState, dir string) *apiError {
	ctx := c.r.Context()
	var in struct {
		Message   string     `json:"message"`
		Tree      string     `json:"tree"`
		Parents   []string   `json:"parents"`
		Author    *gitPerson `json:"author"`
		Committer *gitPerson `json:"committer"`
		Signature *string    `json:"signature"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	if objectType(ctx, dir, in.Tree) != "tree" {
		return errValidation("Tree SHA does not exist")
	}
	args := []string{"commit-tree", in.Tree}
	for _, p := range in.Parents {
		if objectType(ctx, dir, p) != "commit" {
			return errValidation("Parent SHA does not exist or is not a commit object")
		}
		args = append(args, "-p", p)
	}
	now := f.now().UTC()
	// Without an author the token's identity is used; without a committer,
	// the author (when given) or GitHub itself.
	author := gitPerson{Name: c.actor, Email: botEmail(f, c.actor)}
	committer := gitPerson{Name: "GitHub", Email: "noreply@github.com"}
	if in.Author != nil {
		author = *in.Author
		committer = author
	}
	if in.Committer != nil {
		committer = *in.Committer
	}
	date := func(p gitPerson) (string, *apiError) {
		if p.Date == "" {
			return now.Format(time.RFC3339), nil
		}
		if _, err := time.Parse(time.RFC3339, p.Date); err != nil {
			return "", errValidation("date is not an ISO 8601 time")
		}
		return p.Date, nil
	}
	var err *apiError
	if author.Date, err = date(author); err != nil {
		return err
	}
	if committer.Date, err = date(committer); err != nil {
		return err
	}
	env := []string{
		"GIT_AUTHOR_NAME=" + author.Name, "GIT_AUTHOR_EMAIL=" + author.Email, "GIT_AUTHOR_DATE=" + author.Date,
		"GIT_COMMITTER_NAME=" + committer.Name, "GIT_COMMITTER_EMAIL=" + committer.Email, "GIT_COMMITTER_DATE=" + committer.Date,
	}
	out, gerr := fakeGit(ctx, dir, env, []byte(in.Message), append(args, "-F", "-")...)
	if gerr != nil {
		return errStatus(http.StatusInternalServerError, gerr.Error())
	}
	sha := strings.TrimSpace(out)
	// GitHub signs what it authors itself; a given signature is kept but
	// this fake cannot check it.
	switch {
	case in.Author == nil && in.Committer == nil && in.Signature == nil:
		r.verified[sha] = CommitVerification{Verified: true, Reason: "valid"}
	case in.Signature != nil:
		r.verified[sha] = CommitVerification{Reason: "invalid"}
	}
	body, e := commitJSON(ctx, c, r, dir, sha)
	if e != nil {
		return e
	}
	c.json(http.StatusCreated, body)
	return nil
}

// botEmail is the noreply address GitHub gives an account.
func botEmail(f *Fake, login string) string {
	id := int64(0)
	if u, ok := f.users[strings.ToLower(login)]; ok {
		id = u.ID
	}
	return fmt.Sprintf("%d+%s@users.noreply.github.com", id, login)
}

func getGitCommit(f *Fake, c *call, r *repoState, dir string) *apiError {
	sha := c.param("commit_sha")
	if objectType(c.r.Context(), dir, sha) != "commit" {
		return errNotFound()
	}
	body, e := commitJSON(c.r.Context(), c, r, dir, sha)
	if e != nil {
		return e
	}
	c.json(http.StatusOK, body)
	return nil
}

// commitJSON describes a commit as GET .../git/commits/{sha} does.
func commitJSON(ctx context.Context, c *call, r *repoState, dir, sha string) (map[string]any, *apiError) {
	out, err := fakeGit(ctx, dir, nil, nil, "show", "-s", "--format=%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B", sha)
	if err != nil {
		return nil, errStatus(http.StatusInternalServerError, err.Error())
	}
	f := strings.SplitN(out, "\x00", 9)
	if len(f) != 9 {
		return nil, errStatus(http.StatusInternalServerError, "unreadable commit "+sha)
	}
	parents := []map[string]any{}
	for _, p := range strings.Fields(f[1]) {
		parents = append(parents, map[string]any{"sha": p, "url": c.gitURL(r, "commits", p),
			"html_url": c.htmlBase() + r.fullName() + "/commit/" + p})
	}
	v := verificationOf(r, sha)
	return map[string]any{
		"sha": sha, "node_id": nodeID("C_", int64(len(sha))), "url": c.gitURL(r, "commits", sha),
		"html_url":  c.htmlBase() + r.fullName() + "/commit/" + sha,
		"author":    map[string]any{"name": f[2], "email": f[3], "date": f[4]},
		"committer": map[string]any{"name": f[5], "email": f[6], "date": f[7]},
		"message":   strings.TrimSuffix(f[8], "\n"),
		"tree":      map[string]any{"sha": f[0], "url": c.gitURL(r, "trees", f[0])},
		"parents":   parents,
		"verification": map[string]any{"verified": v.Verified, "reason": v.Reason,
			"signature": nil, "payload": nil, "verified_at": nil},
	}, nil
}

// htmlBase is the web root the fake's html_url fields use.
func (c *call) htmlBase() string {
	return strings.TrimSuffix(strings.TrimSuffix(c.apiBase, "api/v3/"), "/") + "/"
}

func refJSON(c *call, r *repoState, ref, sha string) map[string]any {
	return map[string]any{"ref": ref, "node_id": nodeID("REF_", int64(len(ref))),
		"url":    c.apiBase + "repos/" + r.fullName() + "/git/" + ref,
		"object": map[string]any{"type": "commit", "sha": sha, "url": c.gitURL(r, "commits", sha)}}
}

func resolveRef(ctx context.Context, dir, ref string) string {
	out, err := fakeGit(ctx, dir, nil, nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// validRefName is GitHub's rule for refs made through the API: fully
// qualified, at least two slashes, and a name git accepts.
func validRefName(ctx context.Context, dir, ref string) bool {
	if !strings.HasPrefix(ref, "refs/") || strings.Count(ref, "/") < 2 {
		return false
	}
	_, err := fakeGit(ctx, dir, nil, nil, "check-ref-format", ref)
	return err == nil
}

func getGitRef(f *Fake, c *call, r *repoState, dir string) *apiError {
	ref := "refs/" + c.param("ref")
	if !validRefName(c.r.Context(), dir, ref) {
		return errNotFound()
	}
	sha := resolveRef(c.r.Context(), dir, ref)
	if sha == "" {
		return errNotFound()
	}
	c.json(http.StatusOK, refJSON(c, r, ref, sha))
	return nil
}

// listMatchingRefs lists the refs whose name (below refs/) starts with the
// given string, as GitHub does: a prefix of the name, not of its path
// components, and an empty list rather than 404 when none does.
func listMatchingRefs(f *Fake, c *call, r *repoState, dir string) *apiError {
	out, err := fakeGit(c.r.Context(), dir, nil, nil, "for-each-ref", "--format=%(refname) %(objectname)", "refs/")
	if err != nil {
		return errStatus(http.StatusInternalServerError, err.Error())
	}
	prefix := "refs/" + c.param("ref")
	list := []map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, sha, ok := strings.Cut(line, " ")
		if ok && strings.HasPrefix(name, prefix) {
			list = append(list, refJSON(c, r, name, sha))
		}
	}
	c.json(http.StatusOK, list)
	return nil
}

func createGitRef(f *Fake, c *call, r *repoState, dir string) *apiError {
	ctx := c.r.Context()
	var in struct {
		Ref string `json:"ref"`
		Sha string `json:"sha"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	if !validRefName(ctx, dir, in.Ref) {
		return errValidation(in.Ref + " is not a valid ref name.")
	}
	if objectType(ctx, dir, in.Sha) != "commit" {
		return errValidation("Object does not exist")
	}
	if resolveRef(ctx, dir, in.Ref) != "" {
		return errValidation("Reference already exists")
	}
	if _, err := fakeGit(ctx, dir, nil, nil, "update-ref", "--create-reflog", "-m", apiRefLog, in.Ref, in.Sha, strings.Repeat("0", 40)); err != nil {
		return errValidation("Reference already exists")
	}
	c.json(http.StatusCreated, refJSON(c, r, in.Ref, in.Sha))
	return nil
}

func updateGitRef(f *Fake, c *call, r *repoState, dir string) *apiError {
	ctx := c.r.Context()
	var in struct {
		Sha   string `json:"sha"`
		Force bool   `json:"force"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	ref := "refs/" + c.param("ref")
	old := resolveRef(ctx, dir, ref)
	if old == "" {
		return errValidation("Reference does not exist")
	}
	if objectType(ctx, dir, in.Sha) != "commit" {
		return errValidation("Object does not exist")
	}
	if !in.Force && old != in.Sha {
		if _, err := fakeGit(ctx, dir, nil, nil, "merge-base", "--is-ancestor", old, in.Sha); err != nil {
			return errValidation("Update is not a fast forward")
		}
	}
	if _, err := fakeGit(ctx, dir, nil, nil, "update-ref", "-m", apiRefLog, ref, in.Sha, old); err != nil {
		return errValidation("Update is not a fast forward")
	}
	c.json(http.StatusOK, refJSON(c, r, ref, in.Sha))
	return nil
}
