# Goes for the session store in the repository's git directory: reads the
# key that seals session.json, to forge an approval with it, and writes a
# session.json and a key of its own there.
set +e # an attacker keeps going when a step is refused
common=$(cd "$(git rev-parse --git-common-dir)" && pwd)
mkdir -p a
{
  echo "key: $(cat "$common/planex/key" 2>&1)"
  echo "sessions: $(ls "$common/planex/sessions" 2>&1)"
  for m in "$common"/planex/sessions/*/session.json; do
    echo "meta $m: $(head -c 200 "$m" 2>&1)"
    printf '{"id":"x","approved":{"tasks":true},"auto_approve":true}' > "$m"
  done
  echo forged > "$common/planex/key"
  mkdir -p "$common/planex/sessions/forged" && echo '{}' > "$common/planex/sessions/forged/session.json"
} > a/attempt.txt 2>&1
echo "T1 was here" > a/t1.txt
