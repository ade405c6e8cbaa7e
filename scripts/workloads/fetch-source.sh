#!/bin/sh
# fetch-source.sh CACHE PKG
#
# Makes sure the Debian source package PKG (its .dsc and every file the .dsc
# names) is in the download cache CACHE, and prints the path of the .dsc.
#
# The cache is consulted first: once a package is there, apt is not touched
# and no network is needed.  Otherwise the package is downloaded with
# `apt-get source --download-only`.  If apt has no deb-src entry, one is added
# for every Debian repository apt already uses for binary packages (copied
# from that entry, with the type changed to deb-src) into
# /etc/apt/sources.list.d/cpo-deb-src.list (one-line entries) or
# cpo-deb-src.sources (deb822 entries), and `apt-get update` is run.  That
# needs root; without root the script says what to do and fails.
set -eu

die() { echo "fetch-source: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: fetch-source.sh CACHE PKG"
cache=$1
pkg=$2

# newest .dsc of PKG already in the cache, if any
cached_dsc() {
  ls "$cache/$pkg"_*.dsc 2>/dev/null | sort -V | tail -n 1
}

dsc=$(cached_dsc)
if [ -n "$dsc" ]; then
  echo "$dsc"
  exit 0
fi

command -v apt-get >/dev/null 2>&1 || die "$pkg is not in $cache and apt-get is not available to download it"

have_deb_src() {
  [ -n "$(apt-get indextargets --format '$(CREATED_BY)' 'Created-By: Sources' 2>/dev/null)" ]
}

# Prints deb-src copies of the Debian entries apt uses for binary packages.
# $1 = list (one-line entries) or sources (deb822 stanzas).
derive_entries() {
  want=$1
  apt-get indextargets --format '$(SOURCESENTRY) $(ORIGIN)' 'Created-By: Packages' 2>/dev/null |
    awk '$2 == "Debian" { print $1 }' | sort -u |
    while IFS= read -r entry; do
      file=${entry%:*}
      num=${entry##*:}
      [ -r "$file" ] || continue
      case $file in
        *.sources)
          [ "$want" = sources ] || continue
          # stanza number $num (stanzas are separated by blank lines)
          awk -v n="$num" '
            BEGIN { s = 1; inpar = 0 }
            /^[ \t]*$/ { if (inpar) { s++; inpar = 0 } next }
            /^#/ { next }
            { inpar = 1
              if (s == n) {
                if ($0 ~ /^Types:/) print "Types: deb-src"
                else print
              } }
            END { }' "$file"
          echo
          ;;
        *)
          [ "$want" = list ] || continue
          sed -n "${num}p" "$file" | sed 's/^[[:space:]]*deb[[:space:]]/deb-src /'
          ;;
      esac
    done
}

add_deb_src() {
  [ "$(id -u)" -eq 0 ] || die "apt has no deb-src entry and this is not root: run as root once (or add a deb-src line yourself and run apt-get update), or put the sources of $pkg in $cache"
  dir=/etc/apt/sources.list.d
  list=$dir/cpo-deb-src.list
  src=$dir/cpo-deb-src.sources
  tmp=$(mktemp)
  derive_entries list >"$tmp"
  if grep -q '^deb-src' "$tmp"; then
    { echo "# deb-src entries added by cpo's scripts/build-workloads.sh"; cat "$tmp"; } >"$list"
    echo "fetch-source: added $list" >&2
  fi
  derive_entries sources >"$tmp"
  if grep -q '^Types: deb-src' "$tmp"; then
    { echo "# deb-src entries added by cpo's scripts/build-workloads.sh"; cat "$tmp"; } >"$src"
    echo "fetch-source: added $src" >&2
  fi
  if [ ! -e "$list" ] && [ ! -e "$src" ]; then
    # apt knows no Debian repository by origin (no Release files yet?): use
    # the standard ones for this release.
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [ -n "$codename" ] || die "cannot tell the Debian release from /etc/os-release"
    {
      echo "# deb-src entries added by cpo's scripts/build-workloads.sh"
      echo "deb-src http://deb.debian.org/debian $codename main"
      echo "deb-src http://deb.debian.org/debian $codename-updates main"
      echo "deb-src http://deb.debian.org/debian-security $codename-security main"
    } >"$list"
    echo "fetch-source: added $list (standard Debian mirrors)" >&2
  fi
  rm -f "$tmp"
  echo "fetch-source: apt-get update" >&2
  # A broken unrelated repository makes update fail while ours succeeded;
  # whether the source index is usable is checked below.
  apt-get update >&2 || echo "fetch-source: apt-get update reported errors (continuing)" >&2
}

if ! have_deb_src; then
  add_deb_src
elif ! apt-cache showsrc "$pkg" >/dev/null 2>&1; then
  # deb-src is configured but its index was never downloaded.
  [ "$(id -u)" -eq 0 ] || die "apt has deb-src entries but no source index for $pkg: run apt-get update as root"
  echo "fetch-source: deb-src index missing, apt-get update" >&2
  apt-get update >&2 || echo "fetch-source: apt-get update reported errors (continuing)" >&2
fi
apt-cache showsrc "$pkg" 2>/dev/null | grep -q '^Package:' ||
  die "apt knows no source package $pkg (deb-src entries: $(apt-get indextargets --format '$(SOURCESENTRY)' 'Created-By: Sources' | sort -u | tr '\n' ' '))"

# Download into a private directory, then move the files in with the .dsc
# last: a .dsc in the cache always means a complete package.
mkdir -p "$cache"
tmpdir=$(mktemp -d "$cache/.download-$pkg.XXXXXX")
trap 'rm -rf "$tmpdir"' EXIT
echo "fetch-source: downloading source package $pkg into $cache" >&2
# As root apt would try to drop to its _apt user, which cannot write here.
sandbox=""
[ "$(id -u)" -eq 0 ] && sandbox="-o APT::Sandbox::User=root"
# shellcheck disable=SC2086
( cd "$tmpdir" && apt-get -q $sandbox source --download-only "$pkg" >&2 ) || die "apt-get source --download-only $pkg failed"
new=$(ls "$tmpdir"/*.dsc 2>/dev/null | head -n 1)
[ -n "$new" ] || die "apt-get source $pkg produced no .dsc"
for f in "$tmpdir"/*; do
  case $f in *.dsc) continue;; esac
  mv -f "$f" "$cache/"
done
mv -f "$new" "$cache/"
cached_dsc
