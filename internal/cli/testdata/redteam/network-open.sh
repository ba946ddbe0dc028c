# With --network open the user chose the host's network: the direct
# connection to a listener on the host's loopback works.
set +e
mkdir -p a
echo "loopback: $(@NETPROBE@ tcp @LOOP@ loot-open)" > a/net.txt 2>&1
echo "T1 was here" > a/t1.txt
