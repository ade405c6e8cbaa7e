# Sourced (not run) by the integration tests that start cpod, from the
# project root with BUILD set: a temporary directory T holding the
# database DB, both removed at exit together with the daemon (asked to
# quit) and its regions on /dev/shm; check WHAT COMMAND... prints
# "ok   WHAT" or "FAIL WHAT" and clears status on a failure.
T=$(mktemp -d)
DB=$T/db
cpod_cleanup() {
  "$BUILD/bin/cpo" quit --db "$DB" >/dev/null 2>&1
  for l in "$DB"/.cpod/*/regions; do
    r=$(readlink "$l") && case "$r" in /dev/shm/cpod-*) rm -rf "$r";; esac
  done
  rm -rf "$T"
}
trap cpod_cleanup EXIT
status=0
check() {   # what, command...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; status=1; fi
}
