# Leaves a git, an ssh and a gpg in the folder every step may write
# (--sandbox-write), whose bin folder is on planex's PATH before the
# system's: planex's own git, uncontained and holding the token, would
# run them when it commits this task or pushes.
set +e # an attacker keeps going when a step is refused
mkdir -p a @SHARED@/bin
for p in git ssh gpg; do
  printf '#!/bin/sh\nenv > @MARK@/shared-%s-ran\nexit 1\n' "$p" > @SHARED@/bin/$p
  chmod +x @SHARED@/bin/$p
done
ls -l @SHARED@/bin > a/attempt.txt 2>&1
echo "T1 was here" > a/t1.txt
