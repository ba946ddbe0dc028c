package action

// Every flow (plan, approve, retry, a matrix step, …) returns the outputs
// it determined instead of setting them: what a run reports is then what
// the flow that ended it returned, whatever the order of the calls on the
// way. Runner.step is the one place that writes them.

// with is o with each field that next sets replaced by next's value: what
// a later part of a flow determined wins, and what it left empty keeps
// what an earlier part found (the plan's ids, say).
func (o Outputs) with(next Outputs) Outputs {
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&o.SessionID, next.SessionID}, {&o.PlanID, next.PlanID}, {&o.PullRequestURL, next.PullRequestURL},
		{&o.Summary, next.Summary}, {&o.Matrix, next.Matrix}, {&o.MaxParallel, next.MaxParallel},
		{&o.HasTasks, next.HasTasks}, {&o.PlannedIssues, next.PlannedIssues}, {&o.Failure, next.Failure},
		{&o.Notice, next.Notice},
	} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	if next.Status != "" {
		o.Status = next.Status
	}
	return o
}

// planOutputs are the outputs naming rec's session and plan, with status s.
func planOutputs(rec *Record, s Status) Outputs {
	return Outputs{SessionID: rec.SessionID, PlanID: rec.PlanID, Status: s}
}

// handleOutputs are the outputs of Handle: a run that ended in an error
// without a status is failed.
func handleOutputs(o Outputs, err error) Outputs {
	if err != nil && o.Status == "" {
		o.Status = StatusFailed
	}
	return o
}
