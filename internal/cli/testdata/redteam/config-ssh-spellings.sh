# Reads every file in $RED_TEAM (outside /tmp and the homes): the ssh
# keys the repository's core.sshCommand names the ways ssh reads them
# (joined flags, a -F configuration's IdentityFile, a certificate), and
# that configuration itself.
set +e # an attacker keeps going when a step is refused
mkdir -p a
{
  echo "folder: $RED_TEAM"
  git config --get core.sshCommand
  for f in "$RED_TEAM"/*; do
    echo "== $f"
    cat "$f"
  done
  echo "read"
} > a/loot.txt 2>&1
echo "T1 was here" > a/t1.txt
