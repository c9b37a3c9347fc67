#!/usr/bin/env bash
# The test command of README.md: installs what the tests need on a fresh Debian machine, then
# runs formatting, lint, every test of the workspace, the fuzz targets (bounded) and the
# documentation build.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
command -v make >/dev/null 2>&1 || need_apt+=(make)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
# The Python package's tests run in a venv (Debian splits venv/ensurepip off python3).
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
# The MPI tracer (tracer/preload) and its test programs: Open MPI, Fortran, and libclang for
# mpi-sys's bindgen.
command -v mpicc >/dev/null 2>&1 || need_apt+=(libopenmpi-dev)
command -v mpirun >/dev/null 2>&1 || need_apt+=(openmpi-bin)
command -v gfortran >/dev/null 2>&1 || need_apt+=(gfortran)
# bindgen needs the C API library (libclang.so, libclang-N.so); libclang-cpp (pulled in by other
# packages, e.g. SimGrid's) does not do.
have_libclang=0
for f in /usr/lib/llvm-*/lib/libclang.so* /usr/lib/llvm-*/lib/libclang-[0-9]*.so* \
         /usr/lib/*/libclang.so* /usr/lib/*/libclang-[0-9]*.so*; do
  [ -e "$f" ] && have_libclang=1
done
[ "$have_libclang" = 1 ] || need_apt+=(libclang-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
  fi
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
# Open MPI 4 refuses to start as root without these (CI containers run as root).
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo test"
cargo test --workspace
echo "== python package (maturin develop into target/pyvenv, pytest)"
venv="$PWD/target/pyvenv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import maturin, pytest' >/dev/null 2>&1 ||
  "$venv/bin/python" -m pip install -q maturin pytest
(cd simulator/python && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop -q)
TIMELESS_BIN="$PWD/target/debug/timeless" "$venv/bin/python" -m pytest -q simulator/python/tests
# Every parser of user files, fuzzed for a bounded time on the stable toolchain (validation/fuzz):
# 15 targets x TIMELESS_FUZZ_SECS (default 8) s; fails on a panic, an abort or a hang, and saves
# the input under target/fuzz-crashes/.
echo "== fuzz (${TIMELESS_FUZZ_SECS:-8} s per target)"
cargo run -q -p timeless-fuzz -- --secs "${TIMELESS_FUZZ_SECS:-8}"
echo "== cargo doc"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q
echo "== all tests passed"
