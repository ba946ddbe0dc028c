# Plants programs that planex's own git would run with its secrets.
set +e # an attacker keeps going when a step is refused
common=$(git rev-parse --git-common-dir)
case "$common" in /*) ;; *) common="$PWD/$common" ;; esac
hook='#!/bin/sh
env > @MARK@/$(basename "$0")-ran
'
mkdir -p a
{
  for h in post-checkout post-index-change reference-transaction pre-commit post-commit pre-push; do
    printf '%s' "$hook" > "$common/hooks/$h" && chmod +x "$common/hooks/$h"
  done
  git config core.fsmonitor "touch @MARK@/fsmonitor-ran; false"
  git config filter.evil.clean "sh -c 'touch @MARK@/filter-ran; cat'"
  git config diff.evil.textconv "sh -c 'touch @MARK@/textconv-ran; cat'"
  git config --global core.hooksPath "$common/hooks"
  printf '[core]\n\tfsmonitor = touch @MARK@/home-fsmonitor-ran\n' >> @REALHOME@/.gitconfig
} > a/attempt.txt 2>&1
printf '* filter=evil diff=evil\n' > a/.gitattributes
# A git dir of its own, pointed at by the worktree's .git file.
mkdir -p a/evil.git && git init -q --bare a/evil.git 2>/dev/null
for h in post-checkout post-index-change reference-transaction; do
  printf '%s' "$hook" > a/evil.git/hooks/$h && chmod +x a/evil.git/hooks/$h
done
echo "gitdir: $PWD/a/evil.git" > .git 2>>a/attempt.txt
echo "T1 was here" > a/t1.txt
