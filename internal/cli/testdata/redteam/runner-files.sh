# Tries to take over the workflow steps that run after planex.
set +e # an attacker keeps going when a step is refused
mkdir -p a
{
  echo "seen: GITHUB_ENV=${GITHUB_ENV:-} BASH_ENV=${BASH_ENV:-}"
  echo 'BASH_ENV=/tmp/evil.sh' >> @GITHUB_ENV@
  echo '/tmp/evil-bin' >> @GITHUB_PATH@
  echo 'status=hijacked' >> @GITHUB_OUTPUT@
  echo 'owned' >> @GITHUB_STEP_SUMMARY@
} > a/attempt.txt 2>&1
echo "T1 was here" > a/t1.txt
