#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Install the Debian packages offcpu needs to build, test, demo and benchmark,
# when they are missing. Idempotent; needs root (or sudo) for apt-get.
#   scripts/install-deps.sh          everything (build + tests + bench)
#   scripts/install-deps.sh --build  only what `make` needs
set -eu

# clang's sanitizer and libFuzzer runtimes (make check-asan, make fuzz) come in
# a package of clang's own major version: ask the clang that is installed, or
# the one apt would install.
clang_major=$(clang -dumpversion 2>/dev/null | cut -d. -f1)
[ -n "$clang_major" ] || clang_major=$(apt-cache show --no-all-versions clang 2>/dev/null |
	sed -n 's/^Depends:.*clang-\([0-9][0-9]*\).*/\1/p' | head -n 1)
[ -n "$clang_major" ] || clang_major=14 # bookworm's

build_pkgs="make gcc clang llvm pkg-config bpftool libbpf-dev libelf-dev libdw-dev \
libjson-c-dev zlib1g-dev libcurl4-openssl-dev"
# Collectors and the real consumers the tests check outputs with.
test_pkgs="bpftrace bpfcc-tools libbpf-tools jq linux-perf golang-go chromium \
libxml2-utils util-linux procps python3-jsonschema nodejs libclang-rt-$clang_major-dev clang-format \
libc6-dbg python3.11-dbg"
bench_pkgs="hyperfine time perl"
# Complete user stacks (tests/e2e/services.sh, unwind.sh): real services to
# unwind, and separate debug files for libc's and python's inlined frames.
test_pkgs="$test_pkgs postgresql redis-server redis-tools libc6-dbg python3.11-dbg"

case "${1:-}" in
--build) want="$build_pkgs" ;;
*) want="$build_pkgs $test_pkgs $bench_pkgs" ;;
esac

missing=""
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
# npm installs speedscope below. Debian ships it apart from nodejs; a nodejs
# from elsewhere (NodeSource) brings its own and conflicts with Debian's.
[ "$want" = "$build_pkgs" ] || command -v npm >/dev/null || missing="$missing npm"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
if [ -z "$missing" ]; then
	echo "install-deps: all packages present"
else
	echo "install-deps: installing$missing"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi

# speedscope's web app (npm registry), a real consumer of the Chrome Trace export.
[ "${1:-}" = --build ] && exit 0
speedscope=1.22.2
if ! command -v npm >/dev/null; then
	echo "install-deps: npm did not install: the speedscope test of the timeline export will fail" >&2
elif [ "$(npm ls -g --depth=0 speedscope 2>/dev/null | grep -o "speedscope@$speedscope")" != \
	"speedscope@$speedscope" ]; then
	echo "install-deps: npm install -g speedscope@$speedscope"
	$sudo npm install -g --no-audit --no-fund "speedscope@$speedscope" >/dev/null
fi
