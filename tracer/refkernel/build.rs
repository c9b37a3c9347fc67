fn main() {
    println!("cargo:rerun-if-changed=src/kernel.c");
    // Same flags as the tracer's shim (tracer/preload/build.rs): -O2, scalar.
    cc::Build::new()
        .file("src/kernel.c")
        .opt_level(2)
        .flag_if_supported("-fno-tree-vectorize")
        .warnings(true)
        .compile("timeless_refkernel");
}
