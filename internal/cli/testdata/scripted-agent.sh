#!/bin/sh
# A scripted agent that follows planex's command-agent contract, driven by
# files in $FAKE_DIR:
#   analyze.json / plan.json  the result of those phases (default: built in)
#   <ID>.sh                   sourced in the worktree before reporting (execute)
#   <ID>.fail                 report the task as failed with this text
#   <ID>.block                wait until the file disappears (records pid in <ID>.pid)
#   plan-revised.json         the plan result when the prompt carries feedback
set -eu
prompt=$(cat) # a real agent would act on it
# FAKE_COST makes every result report usage, for budget tests.
usage=""
if [ -n "${FAKE_COST:-}" ]; then usage=',"usage":{"input_tokens":100,"output_tokens":10,"cost_usd":'"$FAKE_COST"'}'; fi
case "$PLANEX_PHASE" in
analyze)
  if [ -f "$FAKE_DIR/analyze.json" ]; then cat "$FAKE_DIR/analyze.json" > "$PLANEX_RESULT_FILE"; exit 0; fi
  echo '{"type":"feature","complexity":"Medium","angles":[{"id":"E1","angle":"patterns","description":"find patterns","focus":"code"},{"id":"E2","angle":"testing","description":"find tests","focus":"tests"}]'"$usage"'}' > "$PLANEX_RESULT_FILE"
  ;;
explore)
  if [ -f "$FAKE_DIR/$PLANEX_ID.fail" ]; then echo "explore broke" >&2; exit 1; fi
  printf '{"ts":"2026-01-01T00:00:00Z","worker":"%s","type":"convention","data":{"angle":"%s"}}\n' "$PLANEX_ID" "$PLANEX_ID" >> "$PLANEX_SESSION_DIR/discoveries.ndjson"
  # Result on stdout this time, after some chatter.
  echo "exploring $PLANEX_ID"
  printf '{"id":"%s","status":"completed","findings":"findings of %s","key_files":["README.md"],"error":""%s}\n' "$PLANEX_ID" "$PLANEX_ID" "$usage"
  ;;
plan)
  if [ -f "$FAKE_DIR/plan-revised.json" ] && printf '%s' "$prompt" | grep -q "Feedback on an earlier plan"; then
    cat "$FAKE_DIR/plan-revised.json" > "$PLANEX_RESULT_FILE"; exit 0
  fi
  cat "$FAKE_DIR/plan.json" > "$PLANEX_RESULT_FILE"
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
