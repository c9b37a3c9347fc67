//! libFuzzer wrapper of the `sweep_toml` target (timeless_fuzz::targets).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let target = timeless_fuzz::find("sweep_toml").expect("target exists");
    let _ = (target.run)(data);
});
