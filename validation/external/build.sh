#!/bin/sh
# Builds the external validation set (README.md: which repository and commit each comes from)
# outside the repository, with Open MPI's wrappers (mpicc, mpicxx, mpif90) at -O2, without
# OpenMP (one thread per rank).
# Usage: validation/external/build.sh [--out DIR] SRC...
#   SRC: one application's source tree (an exported copy of its repository), recognised by
#   its directory name (CoMD, miniFE, hpcg, miniAMR, CloverLeaf_ref, TeaLeaf_ref, SNAP), or a
#   directory holding such trees. Sources are copied to DIR/src/<name> and built there; the
#   source trees are never modified.
#   DIR (default /work/ext-build, or EXT_BUILD) gets bin/ with one executable per application,
#   named as cases.txt names them. CloverLeaf and TeaLeaf read their input deck from the
#   working directory: bin/cloverleaf and bin/tealeaf are wrappers taking the deck's values
#   as arguments (below); bin/snap takes SNAP's decomposition and sizes the same way.
set -eu
out=${EXT_BUILD:-/work/ext-build}
if [ "${1:-}" = --out ]; then
    out=$2
    shift 2
fi
[ $# -gt 0 ] || { sed -n '2,14p' "$0"; exit 2; }
mkdir -p "$out/src" "$out/bin" "$out/log"
out=$(cd "$out" && pwd)
bin=$out/bin
jobs=${JOBS:-2}
MAKE="nice -n 19 make -j$jobs"

# copy SRC to $out/src/NAME (fresh) and cd there
stage() {
    rm -rf "$out/src/$2"
    cp -r "$1" "$out/src/$2"
    cd "$out/src/$2"
}

build_comd() {
    stage "$1" CoMD
    cd src-mpi
    cp Makefile.vanilla Makefile
    $MAKE CC=mpicc OPTFLAGS=-O2 DO_MPI=ON
    cp ../bin/CoMD-mpi "$bin/comd"
}

build_minife() {
    stage "$1" miniFE
    cd ref/src
    $MAKE CXX=mpicxx CC=mpicc CFLAGS=-O2 CXXFLAGS=-O2
    cp miniFE.x "$bin/minife"
}

build_hpcg() {
    stage "$1" hpcg
    mkdir -p build
    cd build
    ../configure Linux_MPI >/dev/null
    $MAKE CXXFLAGS='$(HPCG_DEFS) -O2'
    cp bin/xhpcg "$bin/hpcg"
}

build_miniamr() {
    stage "$1" miniAMR
    cd ref
    $MAKE CC=mpicc LD=mpicc CFLAGS=-O2
    cp miniAMR.x "$bin/miniamr"
}

# A wrapper that writes the input deck of an application reading NAME.in from its working
# directory into a directory of its own per argument list, and runs it there. Every rank runs
# the wrapper: each writes the same deck and renames it into place (atomic).
deck_wrapper() { # wrapper-name exe deck-name deck-body (with $1.. for the arguments)
    cat > "$bin/$1" <<EOF
#!/bin/sh
# $1 ARGS...: runs $2 in $out/run/$1-ARGS with the deck $3 below.
set -eu
d=$out/run/$1-\$(echo "\$*" | tr ' ' -)
mkdir -p "\$d"
cat > "\$d/$3.\$\$" <<DECK
$4
DECK
mv -f "\$d/$3.\$\$" "\$d/$3"
cd "\$d"
exec $2
EOF
    chmod +x "$bin/$1"
}

build_cloverleaf() {
    stage "$1" CloverLeaf_ref
    $MAKE COMPILER=GNU MPI_COMPILER=mpif90 C_MPI_COMPILER=mpicc OMP_GNU= \
        FLAGS_GNU=-O2 CFLAGS_GNU=-O2 clover_leaf
    cp clover_leaf "$bin/clover_leaf.x"
    # cloverleaf X_CELLS Y_CELLS END_STEP: the test problem of the repository's clover.in
    deck_wrapper cloverleaf "$bin/clover_leaf.x" clover.in "*clover
 state 1 density=0.2 energy=1.0
 state 2 density=1.0 energy=2.5 geometry=rectangle xmin=0.0 xmax=5.0 ymin=0.0 ymax=2.0
 x_cells=\$1
 y_cells=\$2
 xmin=0.0
 ymin=0.0
 xmax=10.0
 ymax=10.0
 initial_timestep=0.04
 timestep_rise=1.5
 max_timestep=0.04
 end_step=\$3
*endclover"
}

build_tealeaf() {
    stage "$1" TeaLeaf_ref
    $MAKE COMPILER=GNU MPI_COMPILER=mpif90 C_MPI_COMPILER=mpicc OMP_GNU= \
        FLAGS_GNU="-O2 -fallow-argument-mismatch" CFLAGS_GNU=-O2 tea_leaf
    cp tea_leaf "$bin/tea_leaf.x"
    # tealeaf CELLS END_STEP: the repository's tea.in (5 states, CG solver) on CELLS x CELLS
    deck_wrapper tealeaf "$bin/tea_leaf.x" tea.in "*tea
state 1 density=100.0 energy=0.0001
state 2 density=0.1 energy=25.0 geometry=rectangle xmin=0.0 xmax=1.0 ymin=1.0 ymax=2.0
state 3 density=0.1 energy=0.1 geometry=rectangle xmin=1.0 xmax=6.0 ymin=1.0 ymax=2.0
state 4 density=0.1 energy=0.1 geometry=rectangle xmin=5.0 xmax=6.0 ymin=1.0 ymax=8.0
state 5 density=0.1 energy=0.1 geometry=rectangle xmin=5.0 xmax=10.0 ymin=7.0 ymax=8.0
x_cells=\$1
y_cells=\$1
xmin=0.0
ymin=0.0
xmax=10.0
ymax=10.0
initial_timestep=0.004
end_step=\$2
tl_max_iters=10000
test_problem 4
tl_use_cg
tl_eps=1.0e-15
tl_preconditioner_type=none
halo_depth=2
*endtea"
}

build_snap() {
    stage "$1" SNAP
    cd src
    $MAKE OPENMP=no FFLAGS=-O2
    cp gsnap "$bin/gsnap.x"
    # snap NPEY NPEZ NX NY NZ NANG NG: SNAP's sample input (qasnap/sample/inp), one thread,
    # 3-D, NPEY x NPEZ ranks (KBA sweeps over y and z), one time step
    deck_wrapper snap "$bin/gsnap.x snap.in snap.out" snap.in "! timeless external validation
&invar
  npey=\$1
  npez=\$2
  ichunk=4
  nthreads=1
  nnested=1
  ndimen=3
  nx=\$3
  lx=0.6
  ny=\$4
  ly=0.6
  nz=\$5
  lz=0.6
  nmom=1
  nang=\$6
  ng=\$7
  epsi=1.0E-4
  iitm=5
  oitm=30
  timedep=0
  tf=1.0
  nsteps=1
  mat_opt=0
  src_opt=0
  scatp=0
  it_det=0
  fluxp=0
  fixup=1
  soloutp=0
  kplane=0
  popout=0
  swp_typ=0
  angcpy=1
  multiswp=1
/"
}

# the build function of an application's source directory, by its name (none: unknown)
builder() {
    case $(basename "$1") in
        CoMD*) echo build_comd ;;
        miniFE*) echo build_minife ;;
        hpcg*|HPCG*) echo build_hpcg ;;
        miniAMR*) echo build_miniamr ;;
        CloverLeaf*) echo build_cloverleaf ;;
        TeaLeaf*) echo build_tealeaf ;;
        SNAP*|snap*) echo build_snap ;;
    esac
}

build_one() { # SRC BUILDER (never called in a condition, so that `set -e` holds inside)
    src=$(cd "$1" && pwd)
    name=$(basename "$src")
    echo "build.sh: $name ($2) -> $out/src/$name, log $out/log/$name.log"
    set +e
    ( set -e; $2 "$src" ) > "$out/log/$name.log" 2>&1
    rc=$?
    set -e
    if [ $rc != 0 ]; then
        echo "build.sh: $name failed; the end of $out/log/$name.log:" >&2
        tail -20 "$out/log/$name.log" >&2
        exit 1
    fi
}

for arg in "$@"; do
    f=$(builder "$arg")
    if [ -n "$f" ]; then
        build_one "$arg" "$f"
        continue
    fi
    found=
    for d in "$arg"/*/; do
        f=$(builder "${d%/}")
        [ -n "$f" ] || continue
        build_one "${d%/}" "$f"
        found=1
    done
    [ -n "$found" ] || { echo "build.sh: $arg: no known application" >&2; exit 2; }
done
echo "build.sh: executables in $bin:"
ls "$bin"
