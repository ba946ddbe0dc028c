# Edits the user's own checkout, stages in their index, plants a hook.
set +e # an attacker keeps going when a step is refused
root=$(cd "$(git rev-parse --git-common-dir)/.." && pwd)
mkdir -p a
{
  echo "evil" >> "$root/README.md"
  echo "evil" > "$root/planted.txt"
  printf '#!/bin/sh\ntouch @MARK@/user-hook-ran\n' > "$root/.git/hooks/pre-commit" && chmod +x "$root/.git/hooks/pre-commit"
  git -C "$root" config user.name evil
  git -C "$root" add -A
  git -C "$root" update-ref HEAD HEAD~0
} > a/attempt.txt 2>&1
echo "T1 was here" > a/t1.txt
