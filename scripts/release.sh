#!/usr/bin/env bash
# scripts/release.sh: build the krew release archives of kubectl-karpenter and
# render the krew plugin manifest (krew/karpenter.yaml.in -> krew-manifest.yaml).
#
# Usage:
#   scripts/release.sh [options] [ARCHIVE...]
#
#   (no inputs)               cargo build --release --locked for this host, then package it
#   --binary [OS/ARCH=]PATH   package an already-built binary (repeatable); without
#                             OS/ARCH= it is packaged for the host platform
#   --target TRIPLE           cargo build --release --locked --target TRIPLE, then package
#                             it for the platform of TRIPLE (repeatable)
#   --archive PATH, ARCHIVE   use an archive built earlier (repeatable), named
#                             kubectl-karpenter-v<version>-<os>-<arch>.tar.gz
#   --out DIR                 output directory for archives, SHA256SUMS and the rendered
#                             krew-manifest.yaml (default: dist/ in the repository)
#   --update-manifest         also write the rendered manifest to the committed
#                             krew-manifest.yaml at the repository top level
#   --no-build                with no inputs, do not build: render the manifest with
#                             placeholder checksums only
#   --require-all             fail unless all four platforms have an archive (use this
#                             for a manifest that is going to be published)
#   -h, --help                show this help
#
# Each archive is kubectl-karpenter-v<version>-<os>-<arch>.tar.gz and contains exactly
# two files at its root: `kubectl-karpenter` and `LICENSE` (krew's index CI requires the
# license to be installed with the plugin). The version comes from Cargo.toml.
#
# Placeholder checksums: a platform whose archive is not part of this run gets the
# all-zero sha256 (64 x "0") in the rendered manifest, and the script prints a
# warning. That is acceptable ONLY in the krew-manifest.yaml committed to the
# repository (it records the manifest's shape and version); a manifest that is
# published to a krew index must come from a run with all four archives
# (use --require-all). In a krew index the manifest is saved as
# plugins/karpenter.yaml: krew requires the file name to equal metadata.name.
#
# Environment:
#   RELEASE_BUILD_CMD   build command (default "cargo build"); e.g. "cross build" or
#                       "cargo zigbuild". "--release --locked [--target T]" is appended.
#   CARGO_TARGET_DIR    honoured when locating the built binary (default target/).
#   SOURCE_DATE_EPOCH   mtime stored in the archives (default: last git commit time),
#                       so that rebuilding the same binary gives the same sha256.
#
# Cross-building the other platforms
# ----------------------------------
# krew serves linux/amd64, linux/arm64, darwin/amd64 and darwin/arm64 from the
# manifest. Build each binary with its Rust target, then hand all of them (or their
# archives) to this script in one run so that one manifest carries all checksums:
#
#   # Linux: static musl binaries run on every distribution
#   rustup target add x86_64-unknown-linux-musl aarch64-unknown-linux-musl
#   cargo build --release --locked --target x86_64-unknown-linux-musl
#   cargo build --release --locked --target aarch64-unknown-linux-musl
#   # macOS (on a Mac with the Xcode command-line tools):
#   rustup target add x86_64-apple-darwin aarch64-apple-darwin
#   cargo build --release --locked --target x86_64-apple-darwin
#   cargo build --release --locked --target aarch64-apple-darwin
#
#   scripts/release.sh --update-manifest --require-all \
#     --binary linux/amd64=target/x86_64-unknown-linux-musl/release/kubectl-karpenter \
#     --binary linux/arm64=target/aarch64-unknown-linux-musl/release/kubectl-karpenter \
#     --binary darwin/amd64=target/x86_64-apple-darwin/release/kubectl-karpenter \
#     --binary darwin/arm64=target/aarch64-apple-darwin/release/kubectl-karpenter
#
#   # or build per machine (CI matrix) and combine the archives afterwards:
#   scripts/release.sh --target aarch64-unknown-linux-musl        # on each builder
#   scripts/release.sh --update-manifest --require-all dist/*.tar.gz   # once, at the end
#
# Note: the AWS SDK's TLS/crypto backend, aws-lc-rs (aws-lc-sys), compiles C and
# assembly. Cross-compiling it needs cmake and clang/libclang (for bindgen on targets
# without pre-generated bindings) plus a C cross-compiler and linker for the target,
# e.g. CC_aarch64_unknown_linux_musl=aarch64-linux-musl-gcc and
# CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=aarch64-linux-musl-gcc. The least
# painful routes are `cross` (RELEASE_BUILD_CMD="cross build", Docker images with the
# toolchains) or cargo-zigbuild (RELEASE_BUILD_CMD="cargo zigbuild", zig as the C
# compiler/linker); darwin binaries are most reliably built on macOS runners.
set -euo pipefail

die() { printf 'release.sh: error: %s\n' "$*" >&2; exit 1; }
warn() { printf 'release.sh: warning: %s\n' "$*" >&2; }
info() { printf 'release.sh: %s\n' "$*" >&2; }
usage() { sed -n '2,/^set -euo pipefail$/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TEMPLATE="$ROOT/krew/karpenter.yaml.in"
LICENSE_FILE="$ROOT/LICENSE"
BIN_NAME="kubectl-karpenter"
PLATFORMS="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"
ZERO_SHA="0000000000000000000000000000000000000000000000000000000000000000"

# ---------------------------------------------------------------- arguments
OUT="$ROOT/dist"
UPDATE_MANIFEST=0
NO_BUILD=0
REQUIRE_ALL=0
BINARIES=()
TARGETS=()
ARCHIVES=()

need_arg() { [ "$#" -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"; }
while [ "$#" -gt 0 ]; do
  case "$1" in
    --binary) need_arg "$@"; BINARIES+=("$2"); shift 2 ;;
    --binary=*) BINARIES+=("${1#*=}"); shift ;;
    --target) need_arg "$@"; TARGETS+=("$2"); shift 2 ;;
    --target=*) TARGETS+=("${1#*=}"); shift ;;
    --archive) need_arg "$@"; ARCHIVES+=("$2"); shift 2 ;;
    --archive=*) ARCHIVES+=("${1#*=}"); shift ;;
    --out) need_arg "$@"; OUT="$2"; shift 2 ;;
    --out=*) OUT="${1#*=}"; shift ;;
    --update-manifest) UPDATE_MANIFEST=1; shift ;;
    --no-build) NO_BUILD=1; shift ;;
    --require-all) REQUIRE_ALL=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; while [ "$#" -gt 0 ]; do ARCHIVES+=("$1"); shift; done ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) ARCHIVES+=("$1"); shift ;;
  esac
done

# ---------------------------------------------------------------- helpers
[ -f "$TEMPLATE" ] || die "template not found: $TEMPLATE"
[ -f "$LICENSE_FILE" ] || die "LICENSE not found: $LICENSE_FILE"

# The [package] version from Cargo.toml.
VERSION="$(awk '
  /^[[:space:]]*\[/ { in_pkg = ($0 ~ /^[[:space:]]*\[package\][[:space:]]*$/); next }
  in_pkg && /^[[:space:]]*version[[:space:]]*=/ {
    v = $0; sub(/^[^=]*=[[:space:]]*"/, "", v); sub(/".*$/, "", v); print v; exit
  }' "$ROOT/Cargo.toml")"
[ -n "$VERSION" ] || die "could not read [package] version from $ROOT/Cargo.toml"
printf '%s\n' "$VERSION" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$' \
  || die "Cargo.toml version '$VERSION' is not semver"

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | awk '{print $1}'
  elif command -v shasum >/dev/null 2>&1; then shasum -a 256 "$1" | awk '{print $1}'
  else die "need sha256sum or shasum"; fi
}

host_platform() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;; Darwin) os=darwin ;;
    *) die "unsupported host OS $(uname -s); pass --binary OS/ARCH=PATH" ;;
  esac
  case "$(uname -m)" in
    x86_64|amd64) arch=amd64 ;; aarch64|arm64) arch=arm64 ;;
    *) die "unsupported host architecture $(uname -m); pass --binary OS/ARCH=PATH" ;;
  esac
  printf '%s/%s\n' "$os" "$arch"
}

triple_platform() {
  case "$1" in
    x86_64-*-linux-*) echo linux/amd64 ;;
    aarch64-*-linux-*) echo linux/arm64 ;;
    x86_64-apple-darwin) echo darwin/amd64 ;;
    aarch64-apple-darwin) echo darwin/arm64 ;;
    *) die "target $1 is not one of the krew platforms ($PLATFORMS)" ;;
  esac
}

valid_platform() {
  case " $PLATFORMS " in *" $1 "*) return 0 ;; *) return 1 ;; esac
}

# Variable name holding the sha256 of a platform, e.g. SHA_linux_amd64.
sha_var() { printf 'SHA_%s\n' "$(printf '%s' "$1" | tr '/' '_')"; }

# Refuse to package a binary that `file` clearly identifies as another platform.
check_binary_platform() {
  local plat="$1" bin="$2" desc want_fmt want_arch
  command -v file >/dev/null 2>&1 || return 0
  desc="$(file -L -b "$bin" 2>/dev/null || true)"
  case "$desc" in ELF*|Mach-O*) ;; *) return 0 ;; esac
  case "$plat" in linux/*) want_fmt=ELF ;; darwin/*) want_fmt=Mach-O ;; esac
  case "$plat" in
    */amd64) want_arch='x86-64|x86_64' ;;
    */arm64) want_arch='aarch64|arm64' ;;
  esac
  case "$desc" in "$want_fmt"*) ;; *) die "$bin is not a $plat binary: $desc" ;; esac
  printf '%s\n' "$desc" | grep -Eq "$want_arch" || die "$bin is not a $plat binary: $desc"
}

check_binary() { # platform path
  [ -f "$2" ] || die "binary not found: $2"
  [ -x "$2" ] || die "binary is not executable: $2"
  check_binary_platform "$1" "$2"
}

# Archive listing must be exactly the binary and LICENSE.
check_archive_contents() {
  local listing
  listing="$(tar -tzf "$1" | sed 's|^\./||' | LC_ALL=C sort | tr '\n' ' ')"
  [ "$listing" = "LICENSE $BIN_NAME " ] \
    || die "$1 must contain exactly $BIN_NAME and LICENSE at its root, found: $listing"
}

source_epoch() {
  if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then echo "$SOURCE_DATE_EPOCH"; return; fi
  git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s
}

SEEN=" "
claim_platform() {
  valid_platform "$1" || die "unsupported platform '$1' (krew platforms here: $PLATFORMS)"
  case "$SEEN" in *" $1 "*) die "two inputs for platform $1" ;; esac
  SEEN="$SEEN$1 "
}

record() { # platform archive
  local sum; sum="$(sha256_of "$2")"
  printf -v "$(sha_var "$1")" '%s' "$sum"
  info "$1: $(basename "$2") sha256 $sum"
}

# package PLATFORM BINARY -> writes OUT/kubectl-karpenter-v<ver>-<os>-<arch>.tar.gz
package() {
  local plat="$1" bin="$2" os arch name stage epoch tmp
  check_binary "$plat" "$bin"
  os="${plat%/*}"; arch="${plat#*/}"
  name="$BIN_NAME-v$VERSION-$os-$arch.tar.gz"
  stage="$WORK/stage-$os-$arch"
  mkdir -p "$stage"
  cp "$bin" "$stage/$BIN_NAME"; chmod 0755 "$stage/$BIN_NAME"
  cp "$LICENSE_FILE" "$stage/LICENSE"; chmod 0644 "$stage/LICENSE"
  epoch="$(source_epoch)"
  tmp="$OUT/.$name.tmp"
  if tar --version 2>/dev/null | grep -q 'GNU tar'; then
    tar --format=gnu --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
        -C "$stage" -cf - "$BIN_NAME" LICENSE | gzip -9n > "$tmp"
  else # bsdtar (macOS): no AppleDouble files, root ownership
    COPYFILE_DISABLE=1 tar --format ustar --uid 0 --gid 0 --uname root --gname root \
        -C "$stage" -cf - "$BIN_NAME" LICENSE | gzip -9n > "$tmp"
  fi
  mv -f "$tmp" "$OUT/$name"
  check_archive_contents "$OUT/$name"
  record "$plat" "$OUT/$name"
}

# Platform of an archive built earlier, from its name; checks version and contents.
archive_platform() {
  local path="$1" base plat ver
  [ -f "$path" ] || die "archive not found: $path"
  base="$(basename "$path")"
  case "$base" in "$BIN_NAME"-v*-*-*.tar.gz) ;; *) die "archive must be named $BIN_NAME-v<version>-<os>-<arch>.tar.gz: $base" ;; esac
  ver="${base#"$BIN_NAME"-v}"; ver="${ver%-*-*.tar.gz}"           # 1.2.3
  [ "$ver" = "$VERSION" ] || die "$base is version $ver but Cargo.toml says $VERSION"
  plat="${base#"$BIN_NAME"-v"$VERSION"-}"; plat="${plat%.tar.gz}"  # linux-amd64
  check_archive_contents "$path"
  printf '%s\n' "$plat" | tr '-' '/'
}

add_archive() { # platform path
  local base; base="$(basename "$2")"
  if [ "$(cd "$(dirname "$2")" && pwd)/$base" != "$OUT/$base" ]; then
    cp -f "$2" "$OUT/$base"
  fi
  record "$1" "$OUT/$base"
}

# ---------------------------------------------------------------- work
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kubectl-karpenter-release.XXXXXX")"
trap 'rm -rf "$WORK"; rm -f "$OUT"/.*.tar.gz.tmp' EXIT

read -r -a BUILD_CMD <<< "${RELEASE_BUILD_CMD:-cargo build}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac

# Pass 1: the platform of every input. Duplicates, unknown platforms, misnamed
# archives and (with --require-all) missing platforms fail before anything is built.
SEP=$'\x1f'
JOBS=()
n_inputs=$(( ${#BINARIES[@]} + ${#TARGETS[@]} + ${#ARCHIVES[@]} ))
if [ "$n_inputs" -eq 0 ] && [ "$NO_BUILD" -eq 0 ]; then
  plat="$(host_platform)"
  JOBS+=("host$SEP$plat$SEP")
fi
for t in ${TARGETS[@]+"${TARGETS[@]}"}; do
  plat="$(triple_platform "$t")"
  JOBS+=("target$SEP$plat$SEP$t")
done
for b in ${BINARIES[@]+"${BINARIES[@]}"}; do
  if printf '%s' "$b" | grep -Eq '^[a-z]+[/-][a-z0-9]+='; then
    plat="$(printf '%s' "${b%%=*}" | tr '-' '/')"
    b="${b#*=}"
  else
    plat="$(host_platform)"
  fi
  valid_platform "$plat" || die "unsupported platform '$plat' (krew platforms here: $PLATFORMS)"
  check_binary "$plat" "$b"
  JOBS+=("binary$SEP$plat$SEP$b")
done
for a in ${ARCHIVES[@]+"${ARCHIVES[@]}"}; do
  plat="$(archive_platform "$a")"
  JOBS+=("archive$SEP$plat$SEP$a")
done
for job in ${JOBS[@]+"${JOBS[@]}"}; do
  IFS="$SEP" read -r kind plat value <<< "$job"
  claim_platform "$plat"
done
if [ "$REQUIRE_ALL" -eq 1 ]; then
  for plat in $PLATFORMS; do
    case "$SEEN" in *" $plat "*) ;; *) die "--require-all: no input for $plat" ;; esac
  done
fi

# Pass 2: build, package, hash.
for job in ${JOBS[@]+"${JOBS[@]}"}; do
  IFS="$SEP" read -r kind plat value <<< "$job"
  case "$kind" in
    host)
      info "building $BIN_NAME v$VERSION for the host ($plat): ${BUILD_CMD[*]} --release --locked"
      (cd "$ROOT" && "${BUILD_CMD[@]}" --release --locked)
      package "$plat" "$TARGET_DIR/release/$BIN_NAME" ;;
    target)
      info "building $BIN_NAME v$VERSION for $value ($plat): ${BUILD_CMD[*]} --release --locked --target $value"
      (cd "$ROOT" && "${BUILD_CMD[@]}" --release --locked --target "$value")
      package "$plat" "$TARGET_DIR/$value/release/$BIN_NAME" ;;
    binary) package "$plat" "$value" ;;
    archive) add_archive "$plat" "$value" ;;
  esac
done

# ---------------------------------------------------------------- manifest
missing=""
sed_args=(-e "s|{{VERSION}}|$VERSION|g")
for plat in $PLATFORMS; do
  var="$(sha_var "$plat")"
  sum="${!var:-}"
  if [ -z "$sum" ]; then
    missing="$missing $plat"
    sum="$ZERO_SHA"
  fi
  key="$(printf '%s' "$plat" | tr '/a-z' '_A-Z')"
  sed_args+=(-e "s|{{SHA256_${key}}}|$sum|g")
done
missing="${missing# }"

if [ -n "$missing" ]; then
  if [ "$REQUIRE_ALL" -eq 1 ]; then
    die "--require-all: no archive for: $missing"
  fi
  for plat in $missing; do
    warn "no $plat archive in this run: its sha256 is the all-zero placeholder."
  done
  warn "placeholder checksums are acceptable only in the committed krew-manifest.yaml;" \
       "a manifest for a krew index needs all four archives (--require-all)."
fi

rendered="$WORK/krew-manifest.yaml"
{
  echo "# Generated by scripts/release.sh from krew/karpenter.yaml.in; do not edit by hand."
  echo "# In a krew index this file must be named plugins/karpenter.yaml (= metadata.name)."
  if [ -n "$missing" ]; then
    echo "# Placeholder (all-zero) sha256, archive not built in this run: $missing"
  fi
  # drop the template's leading comment block, fill in the placeholders
  awk 'started || !/^(#|[[:space:]]*$)/ { started = 1; print }' "$TEMPLATE" | sed "${sed_args[@]}"
} > "$rendered"

if grep -q '{{' "$rendered"; then
  die "unfilled placeholder left in the manifest: $(grep -o '{{[^}]*}}' "$rendered" | head -1)"
fi

cp "$rendered" "$OUT/krew-manifest.yaml"
info "wrote $OUT/krew-manifest.yaml"
if [ "$UPDATE_MANIFEST" -eq 1 ]; then
  cp "$rendered" "$ROOT/krew-manifest.yaml"
  info "wrote $ROOT/krew-manifest.yaml"
fi

# SHA256SUMS for the release page (every archive of this version present in OUT).
(
  cd "$OUT"
  for f in "$BIN_NAME-v$VERSION"-*.tar.gz; do
    [ -f "$f" ] || continue
    printf '%s  %s\n' "$(sha256_of "$f")" "$f"
  done
) > "$WORK/SHA256SUMS"
cp "$WORK/SHA256SUMS" "$OUT/SHA256SUMS"
