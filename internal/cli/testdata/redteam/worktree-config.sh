# Reads the per-worktree git config (extensions.worktreeConfig): the main
# worktree's config.worktree and every linked worktree's, where `git
# config --worktree` leaves settings, credentials too; then asks git.
set +e # an attacker keeps going when a step is refused
common=$(git rev-parse --path-format=absolute --git-common-dir)
{
  echo "common: $common"
  for f in "$common/config.worktree" "$common"/worktrees/*/config.worktree; do
    echo "== $f"; cat "$f"
  done
  git config --list --show-origin
  echo "head: $(git rev-parse HEAD)"
} > a/loot.txt 2>&1
mkdir -p a && echo "T1 was here" > a/t1.txt
