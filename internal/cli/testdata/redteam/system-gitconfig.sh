# Reads the git configuration outside the repository that CI images and
# users fill with credentials: /etc/gitconfig, the files GIT_CONFIG_SYSTEM
# and GIT_CONFIG_GLOBAL name and $XDG_CONFIG_HOME/git/config, then what
# they include and the store their credential helper names ($RED_TEAM
# lists them all, since planex passes none of those variables on and an
# attacker may know the paths); then asks git, pointed at them, for every
# value and for a credential.
set +e # an attacker keeps going when a step is refused
{
  for f in /etc/gitconfig $RED_TEAM; do echo "== $f"; cat "$f"; done
  set -- $RED_TEAM
  GIT_CONFIG_SYSTEM=$1 GIT_CONFIG_GLOBAL=$2 git config --list --show-origin
  for f in $RED_TEAM; do git config --file "$f" --includes --list; done
  for f in $(git config --file "$2" --get-all include.path) \
           $(git config --file "$2" --get credential.helper | sed -n 's/.*--file[= ]//p'); do
    echo "== $f"; cat "$f"
  done
  printf 'protocol=https\nhost=git.example\n\n' | GIT_CONFIG_SYSTEM=$1 GIT_CONFIG_GLOBAL=$2 GIT_TERMINAL_PROMPT=0 git credential fill
  echo "user: $(GIT_CONFIG_GLOBAL=$2 git config --global user.name)"
} > a/loot.txt 2>&1
mkdir -p a && echo "T1 was here" > a/t1.txt
