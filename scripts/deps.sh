#!/usr/bin/env bash
# Installs the Debian 12 packages xpubench needs, when they are missing.
#   scripts/deps.sh build   what building and running needs
#   scripts/deps.sh test    that plus what the test suite needs
#   scripts/deps.sh data    that plus the datasets of time-to-accuracy runs (Fashion-MNIST)
# As root it runs apt-get itself; otherwise it prints the command to run and fails.
set -euo pipefail

build_pkgs=(
  cmake make gcc pkg-config            # toolchain
  libyaml-dev                          # scenarios
  zlib1g-dev                           # gzipped dataset files (Fashion-MNIST)
  libjansson-dev                       # results JSON
  libdnnl-dev                          # the oneDNN CPU backend
  libcurl4-openssl-dev                 # xpubench upload
  libmicrohttpd-dev libsqlite3-dev libgnutls28-dev libpq-dev   # the leaderboard service (libpq: its optional PostgreSQL store)
)
test_pkgs=(
  libcmocka-dev                        # unit tests
  valgrind                             # the uninitialised-read pass of scripts/test (memcheck)
  chromium                             # headless browser tests of the leaderboard page and the report
  postgresql                           # the leaderboard's suites on PostgreSQL (skipped without)
  libopenmpi-dev openmpi-bin           # data-parallel tests: the MPI module and mpirun (skipped without)
  dataset-fashion-mnist                # time-to-accuracy tests on real data
)
data_pkgs=(
  dataset-fashion-mnist                # data: fashion-mnist (configs/tta-fashion-mnist*.yaml)
)

want=("${build_pkgs[@]}")
case "${1:-build}" in
  build) ;;
  test) want+=("${test_pkgs[@]}") ;;
  data) want+=("${data_pkgs[@]}") ;;
  *) echo "usage: scripts/deps.sh [build|test|data]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$status" in
    *"install ok installed"*) ;;
    *) missing+=("$p") ;;
  esac
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  echo "xpubench: installing missing Debian packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
else
  echo "xpubench: missing Debian packages: ${missing[*]}" >&2
  echo "run as root, or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
