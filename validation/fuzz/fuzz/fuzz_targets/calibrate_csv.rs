//! libFuzzer wrapper of the `calibrate_csv` target (timeless_fuzz::targets).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let target = timeless_fuzz::find("calibrate_csv").expect("target exists");
    let _ = (target.run)(data);
});
