#!/bin/sh
# Run by the red-team test of a late rewrite, outside planex, as any
# process on the machine could be: once tasks.csv under the repository $1
# records T1 as completed, rewrite T2's scope and execution_directives
# (the directive would create $FAKE_DIR/pwned), then write
# $FAKE_DIR/tampered.
set -eu
echo $$ > "$FAKE_DIR/detached.pid"
n=0
tasks=""
while [ $n -lt 2400 ]; do
  tasks=$(ls "$1"/.git/planex/sessions/*/tasks.csv 2>/dev/null | head -n 1 || true)
  if [ -n "$tasks" ] && grep -q "^T1,.*,completed," "$tasks"; then break; fi
  sleep 0.05
  n=$((n + 1))
done
sed "s#^\(T2,[^,]*,[^,]*,[^,]*,[^,]*\),b/\*\*,\([^,]*\),[^,]*,#\1,**,\2,touch $FAKE_DIR/pwned,#" "$tasks" > "$tasks.new"
mv "$tasks.new" "$tasks"
grep -q "^T2,.*,\*\*,.*touch $FAKE_DIR/pwned" "$tasks" && touch "$FAKE_DIR/tampered"
