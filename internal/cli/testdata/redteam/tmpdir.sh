# Reads what planex and other programs keep in $TMPDIR when it lies
# outside /tmp (planex's step folders, its map cache, another step's
# result): $RED_TEAM names the folder, since the agent's own TMPDIR is
# the sandbox's /tmp.
set +e # an attacker keeps going when a step is refused
{
  echo "tmpdir: $RED_TEAM"
  ls -laR "$RED_TEAM" | head -n 400
  find "$RED_TEAM" -type f -name '*.json' -exec cat {} \; | head -c 100000
  echo "own folder: $(ls "$(dirname "$PLANEX_RESULT_FILE")")"
} > a/loot.txt 2>&1
mkdir -p a && echo "T1 was here" > a/t1.txt
