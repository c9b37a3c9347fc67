//! libFuzzer wrapper of the `jobs` target (timeless_fuzz::targets).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let target = timeless_fuzz::find("jobs").expect("target exists");
    let _ = (target.run)(data);
});
