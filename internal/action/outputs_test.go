package action

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/event"
)

// anyValue in a wanted output stands for any non-empty value (a session
// id, a plan id, a summary the test does not spell out).
const anyValue = "<any>"

// sameOutputs says how got differs from want ("" when it does not):
// field by field, anyValue matching any non-empty value.
func sameOutputs(got, want Outputs) string {
	var diffs []string
	for _, f := range []struct {
		name      string
		got, want string
	}{
		{"SessionID", got.SessionID, want.SessionID}, {"PlanID", got.PlanID, want.PlanID},
		{"PullRequestURL", got.PullRequestURL, want.PullRequestURL}, {"Status", string(got.Status), string(want.Status)},
		{"Summary", got.Summary, want.Summary}, {"Matrix", got.Matrix, want.Matrix}, {"MaxParallel", got.MaxParallel, want.MaxParallel},
		{"HasTasks", got.HasTasks, want.HasTasks}, {"PlannedIssues", got.PlannedIssues, want.PlannedIssues},
		{"Failure", got.Failure, want.Failure}, {"Notice", got.Notice, want.Notice},
	} {
		if f.got == f.want || (f.want == anyValue && f.got != "") {
			continue
		}
		diffs = append(diffs, f.name+" = "+strconv.Quote(f.got)+", want "+strconv.Quote(f.want))
	}
	return strings.Join(diffs, "; ")
}

// TestFlowOutputs: every flow returns its outputs, and none writes the
// runner's: each row runs one flow of a fresh job against the fake GitHub
// and a real repository, and checks what it returned while the runner's
// Outputs stay empty (Runner.step alone writes them).
func TestFlowOutputs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name string
		cfg  func(*Config)
		// flow runs the flow under test; n is an issue by the maintainer.
		flow    func(w *world, f *flowSet, n int) (Outputs, error)
		want    Outputs
		wantErr bool
		// said is a part of the thread's last comment, when the flow replies.
		said string
	}{
		{name: "ignored event", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, &event.Event{Name: event.IssueComment, Ignored: true, IgnoreReason: "an edit", Owner: wOwner, Repo: wName})
		}, want: Outputs{Status: StatusIgnored, Notice: "planex: issue_comment ignored: an edit"}},
		{name: "help", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, w.comment(n, "maintainer", "/planex help"))
		}, want: Outputs{Status: StatusReplied}, said: "/planex approve"},
		{name: "a reader's command", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, w.comment(n, "reader", "/planex add a file"))
		}, want: Outputs{Status: StatusRefused}, said: "@reader"},
		{name: "a reader refused before", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			if _, err := f.intake.handle(ctx, w.comment(n, "reader", "/planex add a file")); err != nil {
				return Outputs{}, err
			}
			return f.intake.handle(ctx, w.comment(n, "reader", "/planex add another"))
		}, want: Outputs{Status: StatusRefused, Notice: anyValue}},
		{name: "status without a plan", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, w.comment(n, "maintainer", "/planex status"))
		}, want: Outputs{}, said: "No plan here yet"},
		{name: "cancel without a plan", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, w.comment(n, "maintainer", "/planex cancel"))
		}, want: Outputs{Status: StatusRefused}, said: "Nothing to cancel"},
		{name: "approve without a plan", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, w.comment(n, "maintainer", "/planex approve 0123456789"))
		}, want: Outputs{Status: StatusRefused}, said: "There is no plan to approve here"},
		{name: "retry without a plan", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, w.comment(n, "maintainer", "/planex retry"))
		}, want: Outputs{Status: StatusRefused}, said: "Nothing to retry"},
		{name: "revise without a plan", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, w.comment(n, "maintainer", "/planex revise smaller"))
		}, want: Outputs{Status: StatusRefused}, said: "to revise"},
		{name: "fix-ci on an issue", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, w.comment(n, "maintainer", "/planex fix-ci"))
		}, want: Outputs{Status: StatusRefused}, said: "works on pull requests planex opened"},
		{name: "review on an issue", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, w.comment(n, "maintainer", "/planex review"))
		}, want: Outputs{Status: StatusRefused}, said: "works on pull requests"},
		{name: "plan", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, w.comment(n, "maintainer", "/planex add a file"))
		}, want: Outputs{SessionID: anyValue, PlanID: anyValue, Status: StatusPlanned, Summary: anyValue}, said: "<!-- planex:status"},
		{name: "plan, then status", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			if _, err := f.intake.handle(ctx, w.comment(n, "maintainer", "/planex add a file")); err != nil {
				return Outputs{}, err
			}
			return f.plans.status(ctx, thread{Number: n})
		}, want: Outputs{SessionID: anyValue, PlanID: anyValue, Status: StatusPlanned}, said: "is **planned**"},
		{name: "plan, then cancel", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			if _, err := f.intake.handle(ctx, w.comment(n, "maintainer", "/planex add a file")); err != nil {
				return Outputs{}, err
			}
			return f.plans.cancel(ctx, thread{Number: n, Actor: event.User{Login: "maintainer"}})
		}, want: Outputs{SessionID: anyValue, PlanID: anyValue, Status: StatusCancelled}, said: "is cancelled"},
		{name: "plan, then approve another id", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			if _, err := f.intake.handle(ctx, w.comment(n, "maintainer", "/planex add a file")); err != nil {
				return Outputs{}, err
			}
			return f.runs.approve(ctx, thread{Number: n}, "0123456789", "maintainer", 0)
		}, want: Outputs{SessionID: anyValue, PlanID: anyValue, Status: StatusRefused}, said: "There is no plan `0123456789` here"},
		{name: "approve in matrix mode", cfg: matrixMode("7"), flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			if _, err := f.intake.handle(ctx, w.comment(n, "maintainer", "/planex add a file")); err != nil {
				return Outputs{}, err
			}
			return f.intake.handle(ctx, w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
		}, want: Outputs{SessionID: anyValue, PlanID: anyValue, Status: StatusRunning}},
		{name: "prepare a wave", cfg: matrixMode("7"), flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			if _, err := f.intake.handle(ctx, w.comment(n, "maintainer", "/planex add a file")); err != nil {
				return Outputs{}, err
			}
			if _, err := f.intake.handle(ctx, w.comment(n, "maintainer", "/planex approve "+w.planID(n))); err != nil {
				return Outputs{}, err
			}
			return f.matrix.prepare(ctx, &event.Event{Number: n})
		}, want: Outputs{SessionID: anyValue, PlanID: anyValue, Status: StatusRunning, Matrix: `{"include":[{"task":"T1"}]}`, MaxParallel: "1", HasTasks: "true"}},
		{name: "dispatch with auto-approve by someone who may not approve", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName,
				Sender: event.User{Login: "reader", Type: "User"}, Inputs: event.Inputs{Requirement: "add a file", AutoApprove: true}})
		}, want: Outputs{Status: StatusRefused, Notice: anyValue}},
		{name: "schedule with nothing labelled", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, &event.Event{Name: event.Schedule, Owner: wOwner, Repo: wName})
		}, want: Outputs{Status: StatusIgnored, PlannedIssues: "0", Notice: anyValue}},
		{name: "failed CI with ci-fix off", cfg: func(c *Config) { c.CIFix = CIFixOff }, flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, &event.Event{Name: event.WorkflowRun, Owner: wOwner, Repo: wName, Run: &event.Run{ID: 7, HeadBranch: "planex/1-x"}})
		}, want: Outputs{Status: StatusIgnored, Notice: "planex: workflow_run ignored: ci-fix is off"}},
		{name: "failed CI off planex's branches", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, &event.Event{Name: event.WorkflowRun, Owner: wOwner, Repo: wName, Run: &event.Run{ID: 7, HeadBranch: "main"}})
		}, want: Outputs{Status: StatusIgnored, Notice: anyValue}},
		{name: "an event without a repository", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.intake.handle(ctx, &event.Event{Name: event.IssueComment})
		}, want: Outputs{}, wantErr: true},
		{name: "finalize without a plan", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.runs.finalize(ctx, &event.Event{Number: n})
		}, want: Outputs{}},
		{name: "prepare without a running plan", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.matrix.prepare(ctx, &event.Event{Number: n})
		}, want: Outputs{}},
		{name: "a task of no wave", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.matrix.runTask(ctx, &event.Event{Number: n}, "T1")
		}, want: Outputs{}},
		{name: "collect without a wave", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.matrix.collect(ctx, &event.Event{Number: n})
		}, want: Outputs{}},
		{name: "a user error", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.talk.fail(ctx, thread{Number: n}, nil, userf("give a requirement"))
		}, want: Outputs{Status: StatusFailed, Failure: "give a requirement"}, said: "give a requirement"},
		{name: "an internal error", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.talk.fail(ctx, thread{Number: n}, nil, errors.New("boom"))
		}, want: Outputs{Status: StatusFailed, Failure: "planex hit an internal error."}, wantErr: true, said: "internal error"},
		{name: "an error told already", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.talk.fail(ctx, thread{Number: n}, nil, &reported{errors.New("boom")})
		}, want: Outputs{}, wantErr: true},
		{name: "a lost race", flow: func(w *world, f *flowSet, n int) (Outputs, error) {
			return f.talk.lostRace(ctx, thread{Number: n}, "cancel")
		}, want: Outputs{Status: StatusSuperseded, Notice: "Another planex run handled this thread's plan at the same time, so this cancel did nothing."}, said: "so this cancel did nothing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newParallelWorld(t)
			w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
			n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
			mutate := []func(*Config){}
			if c.cfg != nil {
				mutate = append(mutate, c.cfg)
			}
			r, _ := w.job(mutate...)
			got, err := c.flow(w, r.flows(), n)
			if (err != nil) != c.wantErr {
				t.Fatalf("error %v, want one: %v", err, c.wantErr)
			}
			if d := sameOutputs(got, c.want); d != "" {
				t.Errorf("outputs: %s", d)
			}
			if r.Outputs != (Outputs{}) {
				t.Errorf("the flow wrote the runner's outputs: %+v", r.Outputs)
			}
			if c.said != "" && !strings.Contains(w.lastComment(n), c.said) {
				t.Errorf("the thread was told:\n%s\nwant it to say %q", w.lastComment(n), c.said)
			}
			if got.Status != "" && !statusKnown(got.Status) {
				t.Errorf("status %q is not in the closed set", got.Status)
			}
			w.noRefusedRequests()
		})
	}
}

func statusKnown(s Status) bool {
	for _, k := range Statuses() {
		if s == k {
			return true
		}
	}
	return false
}

// TestEntryPointsWriteWhatFlowsReturn: each entry point writes the
// outputs of its flow, as the flow returned them: Handle marks an error
// without a status failed, Prepare says has-tasks false when it prepared
// nothing.
func TestEntryPointsWriteWhatFlowsReturn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name    string
		run     func(r *Runner, n int) error
		want    Outputs
		wantErr bool
	}{
		{"Handle, an event without a repository", func(r *Runner, n int) error { return r.Handle(ctx, &event.Event{Name: event.IssueComment}) },
			Outputs{Status: StatusFailed}, true},
		{"Handle, an ignored event", func(r *Runner, n int) error {
			return r.Handle(ctx, &event.Event{Name: event.Issues, Label: "bug", Owner: wOwner, Repo: wName, Number: n})
		}, Outputs{Status: StatusIgnored, Notice: anyValue}, false},
		{"Prepare without a running plan", func(r *Runner, n int) error { return r.Prepare(ctx, &event.Event{Number: n}) },
			Outputs{HasTasks: "false"}, false},
		{"Prepare without an issue", func(r *Runner, n int) error { return r.Prepare(ctx, &event.Event{}) },
			Outputs{HasTasks: "false"}, true},
		{"Finalize without a plan", func(r *Runner, n int) error { return r.Finalize(ctx, &event.Event{Number: n}) }, Outputs{}, false},
		{"Collect without a wave", func(r *Runner, n int) error { return r.Collect(ctx, &event.Event{Number: n}) }, Outputs{}, false},
		{"RunTask of no wave", func(r *Runner, n int) error { return r.RunTask(ctx, &event.Event{Number: n}, "T1") }, Outputs{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newParallelWorld(t)
			n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
			r, _ := w.job()
			if err := c.run(r, n); (err != nil) != c.wantErr {
				t.Errorf("error %v, want one: %v", err, c.wantErr)
			}
			if d := sameOutputs(r.Outputs, c.want); d != "" {
				t.Errorf("outputs: %s", d)
			}
		})
	}
}

func TestOutputsWith(t *testing.T) {
	t.Parallel()
	ids := Outputs{SessionID: "s", PlanID: "p"}
	cases := []struct {
		name       string
		base, next Outputs
		want       Outputs
	}{
		{"the later part's status wins", Outputs{Status: StatusPlanned}, Outputs{Status: StatusDone}, Outputs{Status: StatusDone}},
		{"what the later part left empty is kept", ids, Outputs{Status: StatusRefused}, Outputs{SessionID: "s", PlanID: "p", Status: StatusRefused}},
		{"an empty result changes nothing", Outputs{Status: StatusFailed, Failure: "x"}, Outputs{}, Outputs{Status: StatusFailed, Failure: "x"}},
		{"every field is carried", Outputs{}, Outputs{SessionID: "s", PlanID: "p", PullRequestURL: "u", Status: StatusDone, Summary: "m",
			Matrix: "{}", MaxParallel: "2", HasTasks: "true", PlannedIssues: "1", Failure: "f", Notice: "n"},
			Outputs{SessionID: "s", PlanID: "p", PullRequestURL: "u", Status: StatusDone, Summary: "m",
				Matrix: "{}", MaxParallel: "2", HasTasks: "true", PlannedIssues: "1", Failure: "f", Notice: "n"}},
	}
	for _, c := range cases {
		if got := c.base.with(c.next); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestOutputsWrittenInOnePlace: in product code, the runner's Outputs
// are assigned only in Runner.step; flows return theirs.
func TestOutputsWrittenInOnePlace(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var writers []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		writers = append(writers, outputWriters(f)...)
	}
	if len(writers) != 1 || writers[0] != "Runner.step" {
		t.Errorf("the outputs are written in %v, want only in Runner.step", writers)
	}
	probe, err := parser.ParseFile(fset, "probe.go", `package x
func (r *Runner) a() { r.Outputs.Status = StatusDone }
func (r *talker) b() { r.x.Outputs = Outputs{} }
func c(r *Runner) { r.Outputs.Notice, r.y = "n", 1 }`, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := outputWriters(probe); len(got) != 3 {
		t.Errorf("the check found writers %v in the probe, want 3", got)
	}
}

// outputWriters names the functions of f that assign to an Outputs field
// (x.Outputs = … or x.Outputs.F = …), once per assignment.
func outputWriters(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		name := fn.Name.Name
		if fn.Recv != nil && len(fn.Recv.List) > 0 {
			name = recvName(fn.Recv.List[0].Type) + "." + name
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok {
				return true
			}
			for _, lhs := range as.Lhs {
				if writesOutputs(lhs) {
					out = append(out, name)
				}
			}
			return true
		})
	}
	return out
}

func writesOutputs(e ast.Expr) bool {
	for {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if sel.Sel.Name == "Outputs" {
			return true
		}
		e = sel.X
	}
}

func recvName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "?"
}

// TestScheduleSkipsUnreadableState: an issue whose state ref cannot be
// read is not planned over, and not passed over in silence either: the
// job summary names it and why.
func TestScheduleSkipsUnreadableState(t *testing.T) {
	w := newParallelWorld(t)
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	w.fake.LabelIssue(wRepo, n, "maintainer", "planex:auto")
	empty := run(t, w.origin, "hash-object", "-t", "tree", "/dev/null")
	commit := run(t, w.origin, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit-tree", empty, "-m", "not a planex state")
	run(t, w.origin, "update-ref", stateRef(n), commit)

	r, err := w.handle(&event.Event{Name: event.Schedule, Owner: wOwner, Repo: wName})
	if err != nil {
		t.Fatal(err)
	}
	o := r.Outputs
	if o.Status != StatusIgnored || o.PlannedIssues != "0" || !strings.Contains(o.Notice, "skipped: 1") {
		t.Errorf("outputs %+v", o)
	}
	if want := "#" + strconv.Itoa(n) + ": its planex state could not be read"; !strings.Contains(o.Summary, want) {
		t.Errorf("summary:\n%s\nwant %q", o.Summary, want)
	}
	if len(w.fake.Comments(wRepo, n)) != 0 {
		t.Errorf("the issue was written to: %v", w.fake.Comments(wRepo, n))
	}
}
