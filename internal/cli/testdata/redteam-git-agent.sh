#!/bin/sh
# A hostile command agent for the red-team tests of planex's own git. It is
# scripted-agent.sh (which does each task's honest work), preceded, in the
# execute step of the task named in $FAKE_DIR/attack-task (default T1), by
# the attack named in $FAKE_DIR/attack. Every program it plants writes
# $FAKE_DIR/markers/<name> (with its environment) if anything runs it and
# otherwise behaves like cat. It runs no git after planting, so a marker
# can only come from planex's git. Every step it is started for is logged
# in $FAKE_DIR/steps, every attack carried out in $FAKE_DIR/planted.
set -eu
echo "${PLANEX_PHASE:-} ${PLANEX_ID:-}" >> "$FAKE_DIR/steps"
here=$(cd "$(dirname "$0")" && pwd)
target=T1
if [ -f "$FAKE_DIR/attack-task" ]; then target=$(cat "$FAKE_DIR/attack-task"); fi
if [ "${PLANEX_PHASE:-}" = execute ] && [ "${PLANEX_ID:-}" = "$target" ] && [ -f "$FAKE_DIR/attack" ]; then
  markers="$FAKE_DIR/markers"
  bin="$FAKE_DIR/evil-bin"
  mkdir -p "$markers" "$bin"

  # evil NAME: the path of a program that marks NAME when run.
  evil() {
    printf '#!/bin/sh\nenv > "%s/%s"\ncat 2>/dev/null\nexit 0\n' "$markers" "$1" > "$bin/$1"
    chmod +x "$bin/$1"
    echo "$bin/$1"
  }
  # hooks DIR PREFIX: every hook planex's git could trigger, in DIR.
  hooks() {
    mkdir -p "$1"
    for h in post-checkout post-index-change reference-transaction pre-commit post-commit \
      commit-msg prepare-commit-msg pre-push post-rewrite pre-auto-gc post-merge fsmonitor-watchman; do
      cp "$(evil "$2$h")" "$1/$h"
    done
  }
  # config PREFIX: config text naming a program in every setting that can.
  config() {
    hooks "$bin/$1hooks" "$1hookspath-"
    cat <<EOF
[core]
	fsmonitor = $(evil "$1fsmonitor")
	hooksPath = $bin/$1hooks
	sshCommand = $(evil "$1sshcommand")
	askPass = $(evil "$1askpass")
	pager = $(evil "$1pager")
	alternateRefsCommand = $(evil "$1alternaterefs")
[filter "evil"]
	clean = $(evil "$1clean")
	smudge = $(evil "$1smudge")
	required = true
[filter "proc"]
	process = $(evil "$1process")
[diff "evil"]
	textconv = $(evil "$1textconv")
	command = $(evil "$1diffcommand")
[diff]
	external = $(evil "$1diffexternal")
[merge "evil"]
	driver = $(evil "$1mergedriver")
[credential]
	helper = !$(evil "$1credential")
[commit]
	gpgSign = true
[log]
	showSignature = true
[gpg]
	program = $(evil "$1gpg")
[gc]
	auto = 1
EOF
  }

  # Where git keeps this worktree, found without running git.
  admin=$(sed -n 's/^gitdir: //p' .git)
  common=$(cd "$admin" && cd "$(cat commondir)" && pwd)

  for attack in $(cat "$FAKE_DIR/attack"); do
    case "$attack" in
    hooks) # hooks in the repository's common git dir
      hooks "$common/hooks" "hook-"
      ;;
    repo-config) # fsmonitor, hooksPath, filters, drivers … in .git/config
      config "repo-" >> "$common/config"
      ;;
    attributes) # switch the drivers on for every path, two ways
      mkdir -p "$common/info"
      printf '* filter=evil diff=evil merge=evil\n*.txt filter=proc\n' >> "$common/info/attributes"
      printf '* filter=evil diff=evil merge=evil\n' > a/.gitattributes
      ;;
    global-config) # the same in the user's ~/.gitconfig and XDG config
      config "global-" >> "$HOME/.gitconfig"
      mkdir -p "$HOME/.config/git"
      config "xdg-" >> "$HOME/.config/git/config"
      ;;
    gitfile) # point the worktree's .git at a git dir of the agent's own
      own="$FAKE_DIR/own.git"
      cp -R "$common" "$own"
      rm -rf "$own/worktrees"
      printf '[core]\n\tbare = false\n' >> "$own/config"
      config "own-" >> "$own/config"
      hooks "$own/hooks" "own-hook-"
      mkdir -p "$own/info"
      printf '* filter=evil diff=evil\n' >> "$own/info/attributes"
      printf 'gitdir: %s\n' "$own" > .git
      ;;
    index) # stage other content in the worktree's own index, hidden from git add
      printf 'smuggled\n' > "$FAKE_DIR/smuggled.txt"
      blob=$(git hash-object -w "$FAKE_DIR/smuggled.txt")
      mkdir -p a
      printf 'T1 was here\n' > a/t1.txt
      git update-index --add --cacheinfo "100644,$blob,a/t1.txt"
      git update-index --skip-worktree a/t1.txt
      git update-index --add --cacheinfo "100644,$blob,b/smuggled.txt"
      git update-index --skip-worktree b/smuggled.txt
      ;;
    symlinks) # links out of the repository and into .git
      mkdir -p a
      ln -s /etc/passwd a/abs-link
      ln -s ../../outside a/rel-link
      ln -s ../.git/config a/git-link
      ;;
    *)
      echo "unknown attack $attack" >&2
      exit 2
      ;;
    esac
    echo "$attack" >> "$FAKE_DIR/planted"
  done
fi
exec "$here/scripted-agent.sh"
