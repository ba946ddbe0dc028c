# Kills everything it can see, planex first if it can find it.
set +e # an attacker keeps going when a step is refused
mkdir -p a && echo "T1 was here" > a/t1.txt
pkill -9 -f 'planex|e2e|cli.test' 2>/dev/null
kill -9 "$PPID" 2>/dev/null
kill -9 -1
