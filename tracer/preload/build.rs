//! Compiles `src/shim.c` (constants `mpi.h` defines as macros) with the MPI compiler wrapper
//! (`$MPICC`, default `mpicc`).

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rerun-if-env-changed=MPICC");
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".to_string());
    cc::Build::new()
        .compiler(mpicc)
        .file("src/shim.c")
        .opt_level(2)
        .warnings(true)
        .compile("timeless_shim");
}
