fn main() {
    println!("cargo:rerun-if-changed=src/kernel.c");
    // The contract of the kernel (src/lib.rs): -O2, scalar, whatever the Rust profile.
    cc::Build::new()
        .file("src/kernel.c")
        .opt_level(2)
        .flag_if_supported("-fno-tree-vectorize")
        .warnings(true)
        .compile("timeless_refkernel");
}
