# Leaves processes that outlive the step, detached every way a shell can.
set +e # an attacker keeps going when a step is refused
setsid sleep @TAG@1 </dev/null >/dev/null 2>&1 &
nohup sleep @TAG@2 </dev/null >/dev/null 2>&1 &
( ( sleep @TAG@3 </dev/null >/dev/null 2>&1 & ) & )
mkdir -p a && echo "T1 was here" > a/t1.txt
