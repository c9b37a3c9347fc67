//! libFuzzer wrapper of the `profile_db` target (timeless_fuzz::targets).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let target = timeless_fuzz::find("profile_db").expect("target exists");
    let _ = (target.run)(data);
});
