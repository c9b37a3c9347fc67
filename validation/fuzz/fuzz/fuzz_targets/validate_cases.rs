//! libFuzzer wrapper of the `validate_cases` target (timeless_fuzz::targets).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let target = timeless_fuzz::find("validate_cases").expect("target exists");
    let _ = (target.run)(data);
});
