//! libFuzzer wrapper of the `hostfile` target (timeless_fuzz::targets).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let target = timeless_fuzz::find("hostfile").expect("target exists");
    let _ = (target.run)(data);
});
