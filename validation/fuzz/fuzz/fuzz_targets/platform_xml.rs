//! libFuzzer wrapper of the `platform_xml` target (timeless_fuzz::targets).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let target = timeless_fuzz::find("platform_xml").expect("target exists");
    let _ = (target.run)(data);
});
