#!/bin/sh
# Installs booksync from its release archive (scripts/release), no toolchain needed:
#
#   ./install.sh PREFIX
#
# PREFIX/bin/booksync and booksync-network side by side (booksync runs remote
# commands through the helper beside it), PREFIX/share/man/man1/*.1, and the
# completions in PREFIX/share/{bash-completion/completions,zsh/site-functions,
# fish/vendor_completions.d}. Each file is copied to a temporary name beside its
# target and renamed over it, so a running booksync keeps its own copy.
# POSIX sh only.
set -eu
fail() { echo "install.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] || fail "usage: ./install.sh PREFIX"
here=$(cd "$(dirname "$0")" && pwd -P)
prefix=$1
case $prefix in /*) ;; *) prefix=$(pwd -P)/$prefix ;; esac
[ -x "$here/bin/booksync" ] && [ -x "$here/bin/booksync-network" ] || fail "run me from the unpacked archive (bin/booksync is missing)"
pending=
trap 'if [ -n "$pending" ]; then rm -f "$pending"; fi' EXIT
trap 'exit 130' INT TERM
place() {
  mkdir -p "$(dirname "$3")" || fail "cannot create $(dirname "$3")"
  pending=$(dirname "$3")/.$(basename "$3").install.$$
  cp "$2" "$pending" && chmod "$1" "$pending" || fail "cannot write $pending"
  mv -f "$pending" "$3" || fail "cannot replace $3"
  pending=
  echo "  $3"
}
echo "installing into $prefix:"
# The helper first: a booksync is never installed without the helper it needs.
place 755 "$here/bin/booksync-network" "$prefix/bin/booksync-network"
place 755 "$here/bin/booksync" "$prefix/bin/booksync"
for page in "$here"/share/man/man1/*.1; do
  place 644 "$page" "$prefix/share/man/man1/$(basename "$page")"
done
place 644 "$here/share/bash-completion/completions/booksync" "$prefix/share/bash-completion/completions/booksync"
place 644 "$here/share/zsh/site-functions/_booksync" "$prefix/share/zsh/site-functions/_booksync"
place 644 "$here/share/fish/vendor_completions.d/booksync.fish" "$prefix/share/fish/vendor_completions.d/booksync.fish"
version=$("$prefix/bin/booksync" --version) || fail "the installed $prefix/bin/booksync does not run"
echo "installed $version"
case ":${PATH:-}:" in
  *":$prefix/bin:"*) ;;
  *) echo "$prefix/bin is not on your PATH; add to your shell's profile: export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
