//! libFuzzer wrapper of the `callsites` target (timeless_fuzz::targets).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let target = timeless_fuzz::find("callsites").expect("target exists");
    let _ = (target.run)(data);
});
