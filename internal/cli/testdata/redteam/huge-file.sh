# Sourced by the scripted agent in T1's worktree. Writes a file far
# larger than any task needs (to fill the disk, or planex's memory when
# it checks the change).
mkdir -p a
head -c 64M /dev/zero > a/big.bin || exit $?
echo "T1 was here" > a/t1.txt
