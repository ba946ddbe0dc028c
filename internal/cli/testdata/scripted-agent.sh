#!/bin/sh
# A scripted agent that follows planex's command-agent contract, driven by
# files in $FAKE_DIR:
#   analyze.json / plan.json  the result of those phases (default: built in;
#                             analyze names one angle, E1, complexity Low, or
#                             E2 as well, Medium, when two-angles exists)
#   <ID>.sh                   sourced in the worktree before reporting (execute)
#   <ID>.fail                 report the task as failed with this text
#   <ID>.block                wait until the file disappears (records pid in <ID>.pid)
#   plan-revised.json         the plan result when the prompt carries feedback
#   (plan, fixing review findings) one task "fixes/**" whose hints cite every
#                             finding key in the prompt, unless plan-fix.json exists
#   review-<ID>.json / review.json  the review result ("__ID__" becomes the
#                             task id); default: a pass with one criterion met
#   review-<ID>.seen          written by review: the working directory and its files
#   agent-calls               appended by every call: "<phase> <id>"
#   prompt-<phase>[-<ID>].txt written by every call: the prompt it was given
set -eu
prompt=$(cat) # a real agent would act on it
# (Red-team tests give the agent a read-only FAKE_DIR: the log is skipped.)
{ echo "$PLANEX_PHASE ${PLANEX_ID:-}" >> "$FAKE_DIR/agent-calls"; } 2>/dev/null || true
{ printf '%s' "$prompt" > "$FAKE_DIR/prompt-$PLANEX_PHASE${PLANEX_ID:+-$PLANEX_ID}.txt"; } 2>/dev/null || true
# FAKE_COST makes every result report usage, for budget tests.
usage=""
if [ -n "${FAKE_COST:-}" ]; then usage=',"usage":{"input_tokens":100,"output_tokens":10,"cost_usd":'"$FAKE_COST"'}'; fi
case "$PLANEX_PHASE" in
analyze)
  if [ -f "$FAKE_DIR/analyze.json" ]; then cat "$FAKE_DIR/analyze.json" > "$PLANEX_RESULT_FILE"; exit 0; fi
  # One angle is a Low complexity's; a Medium one explores two or three.
  complexity=Low angles='{"id":"E1","angle":"patterns","description":"find patterns","focus":"code"}'
  if [ -f "$FAKE_DIR/two-angles" ]; then
    complexity=Medium angles="$angles"',{"id":"E2","angle":"testing","description":"find tests","focus":"tests"}'
  fi
  echo '{"type":"feature","complexity":"'"$complexity"'","angles":['"$angles"']'"$usage"'}' > "$PLANEX_RESULT_FILE"
  ;;
explore)
  if [ -f "$FAKE_DIR/$PLANEX_ID.fail" ]; then echo "explore broke" >&2; exit 1; fi
  printf '{"ts":"2026-01-01T00:00:00Z","worker":"%s","type":"convention","data":{"angle":"%s"}}\n' "$PLANEX_ID" "$PLANEX_ID" >> "$PLANEX_DISCOVERIES_FILE"
  # Result on stdout this time, after some chatter.
  echo "exploring $PLANEX_ID"
  printf '{"id":"%s","status":"completed","findings":"findings of %s","key_files":["README.md"],"error":""%s}\n' "$PLANEX_ID" "$PLANEX_ID" "$usage"
  ;;
plan)
  if [ -f "$FAKE_DIR/plan-revised.json" ] && printf '%s' "$prompt" | grep -q "Feedback on an earlier plan"; then
    cat "$FAKE_DIR/plan-revised.json" > "$PLANEX_RESULT_FILE"; exit 0
  fi
  if printf '%s' "$prompt" | grep -q "findings of planex's review"; then
    if [ -f "$FAKE_DIR/plan-fix.json" ]; then cat "$FAKE_DIR/plan-fix.json" > "$PLANEX_RESULT_FILE"; exit 0; fi
    keys=$(printf '%s' "$prompt" | grep -o 'finding `[0-9a-f]*`' | tr -d '`' | sed 's/^finding //' | sort -u | tr '\n' ' ' | sed 's/ $//')
    printf '{"summary":"fix review findings","approach":"one task per review","tasks":[{"id":"T1","title":"Fix review findings","description":"Address findings %s","test":"the findings are gone","acceptance_criteria":"each finding is addressed","scope":"fixes/**","hints":"answers: %s","execution_directives":"","deps":[],"context_from":[]}]}' "$keys" "$keys" > "$PLANEX_RESULT_FILE"
    exit 0
  fi
  cat "$FAKE_DIR/plan.json" > "$PLANEX_RESULT_FILE"
  ;;
review)
  { pwd; ls -A; } > "$FAKE_DIR/review-$PLANEX_ID.seen"
  printf '%s' "$prompt" > "$FAKE_DIR/review-$PLANEX_ID.prompt"
  src=""
  if [ -f "$FAKE_DIR/review-$PLANEX_ID.json" ]; then src="$FAKE_DIR/review-$PLANEX_ID.json"; elif [ -f "$FAKE_DIR/review.json" ]; then src="$FAKE_DIR/review.json"; fi
  if [ -n "$src" ]; then sed "s/__ID__/$PLANEX_ID/g" "$src" > "$PLANEX_RESULT_FILE"; exit 0; fi
  printf '{"id":"%s","verdict":"pass","summary":"looks right","criteria":[{"criterion":"file has content","met":true,"evidence":"README.md:1"}],"findings":[]}' "$PLANEX_ID" > "$PLANEX_RESULT_FILE"
  ;;
execute)
  if [ -f "$FAKE_DIR/$PLANEX_ID.block" ]; then
    echo $$ > "$FAKE_DIR/$PLANEX_ID.pid"
    while [ -f "$FAKE_DIR/$PLANEX_ID.block" ]; do sleep 0.05; done
  fi
  if [ -f "$FAKE_DIR/$PLANEX_ID.sh" ]; then . "$FAKE_DIR/$PLANEX_ID.sh"; fi
  if [ -f "$FAKE_DIR/$PLANEX_ID.fail" ]; then
    printf '{"id":"%s","status":"failed","findings":"","tests_passed":false,"error":"%s"}' "$PLANEX_ID" "$(cat "$FAKE_DIR/$PLANEX_ID.fail")" > "$PLANEX_RESULT_FILE"
    exit 0
  fi
  printf '{"id":"%s","status":"completed","findings":"did %s","files_modified":[],"tests_passed":true,"acceptance_met":"all"%s}' "$PLANEX_ID" "$PLANEX_ID" "$usage" > "$PLANEX_RESULT_FILE"
  ;;
esac
