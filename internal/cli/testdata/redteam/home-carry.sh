# Leaves configuration in its home and its /tmp for the steps that come
# after it: a .bashrc, a .gitconfig whose alias and hooks run a program,
# an .npmrc with node-options, a .curlrc and pip.conf naming a proxy of
# its own, and a file of its own; T2's agent records what it finds.
set +e # an attacker keeps going when a step is refused
mkdir -p a "$HOME/.config/pip"
echo 'touch @MARK@/bashrc-ran # PLANTED' > "$HOME/.bashrc"
printf '[core]\n\thooksPath = /PLANTED\n[alias]\n\tst = !touch @MARK@/alias-ran\n' > "$HOME/.gitconfig"
echo 'node-options=--require /PLANTED.js' > "$HOME/.npmrc"
echo 'proxy = http://PLANTED.example:1' > "$HOME/.curlrc"
printf '[global]\nindex-url = http://PLANTED.example/simple\n' > "$HOME/.config/pip/pip.conf"
echo PLANTED > "$HOME/planted.txt"
echo PLANTED > /tmp/planted.txt
echo "$HOME" > a/home.txt
echo "T1 was here" > a/t1.txt
