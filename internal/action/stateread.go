package action

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/session"
)

// The helpers below read session state for what planex shows (a status
// comment, a report, a reply). Such a read must not stop the run, but it
// must not vanish either: a failure is logged, and returned as a sentence
// that the caller shows beside what it could read.

// statusTasks reads rec's tasks for a status comment. When they cannot be
// read it logs why and returns a note saying so for the comment.
func (r *stateStore) statusTasks(rec *Record) ([]plan.Task, string) {
	tasks, err := r.sessionTasks(rec)
	if err != nil {
		return nil, r.unreadable("the plan's tasks", rec.SessionID, err)
	}
	return tasks, ""
}

// shownExplore reads s's explore.csv; a session without one (an imported
// plan) has no rows and no note.
func (r *stateStore) shownExplore(s *session.Session) ([]plan.ExploreRow, string) {
	rows, err := s.ReadExplore()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ""
	}
	if err != nil {
		return nil, r.unreadable("the exploration", s.Meta.ID, err)
	}
	return rows, ""
}

// exploreOf is the session's exploration (none when it has no
// explore.csv).
func (r *stateStore) exploreOf(s *session.Session) ([]plan.ExploreRow, error) {
	rows, err := s.ReadExplore()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return rows, err
}

// unreadable logs a failed read of what (in session id) and returns the
// sentence to show for it.
func (r *env) unreadable(what, id string, err error) string {
	r.Log.Error("reading session state to show it", "what", what, "session", id, "err", err)
	return fmt.Sprintf("planex could not read %s of session %s: %s", what, id, render.Text(err.Error()))
}

// withNote joins a status note and a sentence about unreadable state.
func withNote(note string, extra ...string) string {
	for _, e := range extra {
		if e == "" {
			continue
		}
		if note == "" {
			note = e
		} else {
			note += " " + e
		}
	}
	return note
}

func (r *stateStore) session(rec *Record) (*session.Session, error) {
	return session.Open(session.StoreFor(rec.repo.Root, rec.repo.CommonDir), rec.SessionID)
}

func (r *stateStore) sessionTasks(rec *Record) ([]plan.Task, error) {
	s, err := r.session(rec)
	if err != nil {
		return nil, err
	}
	return s.ReadTasks()
}
