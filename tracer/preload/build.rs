//! Compiles `src/shim.c` with the MPI compiler wrapper (`$MPICC`, default `mpicc`) at a fixed
//! optimisation level: the calibration kernel inside it must not depend on the Rust profile.

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rerun-if-env-changed=MPICC");
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".to_string());
    cc::Build::new()
        .compiler(mpicc)
        .file("src/shim.c")
        .opt_level(2)
        .flag_if_supported("-fno-tree-vectorize")
        .warnings(true)
        .compile("timeless_shim");
}
